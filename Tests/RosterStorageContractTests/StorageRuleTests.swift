import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// The rules no backend repeats, on their own: each backend's contract tests run them again through its calls.
@Suite("Storage rules")
struct StorageRuleTests {
    private let peer = AuditPeer(uid: 1_000, pid: 42, client: nil)

    @Test func onlyAnArgon2idStringIsStorable() {
        #expect(StoredPasswordHash.isStorable("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"))
        #expect(!StoredPasswordHash.isStorable("hunter2"))
        #expect(!StoredPasswordHash.isStorable("$argon2i$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"))
        #expect(!StoredPasswordHash.isStorable(""))
    }

    /// Both backends keep a passkey's transports as this one text: whatever list a client sent comes back as it
    /// was, and no other text reads as a list (a damaged row is refused, not guessed at).
    @Test func transportsGoIntoOneTextAndComeBackAsTheyWere() {
        let lists: [[String]] = [[], [""], ["usb"], ["usb", "nfc", "ble", "internal", "hybrid", "smart-card"],
                                 ["a,b", "\"", "\\", "\u{0}", "\n\t\u{1F}\u{7F}", "[\"x\"]", "키 😀", "", ""]]
        for list in lists {
            #expect(PasskeyTransports.decoded(PasskeyTransports.encoded(list)) == list, "\(list)")
            #expect(!PasskeyTransports.encoded(list).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        }
        #expect(PasskeyTransports.encoded(["usb", "nfc"]) == #"["usb","nfc"]"#)
        #expect(PasskeyTransports.encoded(["a\u{0}\"b"]) == #"["a\u0000\"b"]"#)
        for damaged in ["", "[", "]", "[\"usb\"", "[\"usb\",]", "[usb]", "[\"a\"] ", "[\"\\x\"]", "[\"\\u00\"]",
                        "[\"\\u+041\"]", "[\"a\"\"b\"]", " []"] {
            #expect(PasskeyTransports.decoded(damaged) == nil, "\(damaged)")
        }
    }

    /// WebAuthn §7.2 step 21, as every backend's conditional write applies it.
    @Test func aSignCountIsAcceptedWhenBothAreZeroOrItGoesUp() {
        let stored = { (count: UInt32) in
            StoredPasskey(credentialID: [1], account: 1, algorithm: -7, publicKey: [1], signCount: count, transports: [],
                          name: "")
        }
        #expect(stored(0).accepts(signCount: 0))
        #expect(stored(0).accepts(signCount: 1))
        #expect(stored(5).accepts(signCount: 6))
        #expect(stored(5).accepts(signCount: .max))
        #expect(!stored(5).accepts(signCount: 5))
        #expect(!stored(5).accepts(signCount: 4))
        #expect(!stored(5).accepts(signCount: 0))
        #expect(!stored(.max).accepts(signCount: .max))
    }

    @Test func anEntryIsWrittenOnlyWhenTheWriteChangedSomethingAndNamesTheAccountItFound() {
        let anonymous = AuditRecord(event: .resume, username: nil, peer: peer)
        let alice = Account(id: 1, username: "alice1", display: "alice1", email: nil, createdAtMs: 0)
        var locked = alice
        locked.locked = true
        #expect(AuditRule.resumed.entry(anonymous, after: alice)?.username == "alice1")
        #expect(AuditRule.resumed.entry(anonymous, after: locked) == nil)
        #expect(AuditRule.resumed.entry(anonymous, after: nil) == nil)
        #expect(AuditRule.resumed.entry(nil, after: alice) == nil)
        let named = AuditRecord(event: .resume, username: "bob123", peer: peer)
        #expect(AuditRule.resumed.entry(named, after: alice)?.username == "bob123")
        #expect(AuditRule<Bool>.whenTrue.entry(named, after: false) == nil)
        #expect(AuditRule<Bool>.whenTrue.entry(named, after: true) == named)
        #expect(AuditRule<Int?>.whenFound().entry(named, after: nil) == nil)
        #expect(AuditRule<Int?>.whenFound().entry(named, after: 3) == named)
        #expect(AuditRule<Void>.always.entry(named, after: ()) == named)
    }

    @Test func anImportSkipsWhatIsStoredOrEarlierInTheFile() {
        let ann = ContactDraft(name: "Ann", phone: nil, email: nil, note: nil)
        let bob = ContactDraft(name: "Bob", phone: nil, email: nil, note: nil)
        let cy = ContactDraft(name: "Cy", phone: nil, email: nil, note: nil)
        var sharing = CoreSharing()
        let (fresh, skipped) = ContactImportRule.sort([ann, bob, ann, cy, bob], sharing: &sharing) { $0 == cy }
        #expect(fresh.map(\.0) == [ann, bob])
        #expect(fresh.map(\.1) == [ContactSearchKeys(draft: ann), ContactSearchKeys(draft: bob)])
        #expect(skipped == 3)
    }

    @Test func anExportPageStopsAtTheFirstRefusalOrAtAShortChunk() {
        let contacts = (1...5).map { Contact(id: Int64($0 * 10), draft: ContactDraft(name: "c\($0)", phone: nil,
                                                                                     email: nil, note: nil),
                                             createdAt: 0, updatedAt: 0) }
        var sharing = CoreSharing()
        func feed(_ chunk: ArraySlice<Contact>, size: Int, room: Int) -> ContactExportStep<Page> {
            let rows = Array(chunk)
            return ContactExportStep.feed(count: rows.count, chunkSize: size, after: 0, into: Page(room: room),
                                          sharing: &sharing, contact: { rows[$0] })
        }
        guard case .more(let sink, let after) = feed(contacts[0..<2], size: 2, room: 10) else {
            Issue.record("a full chunk the sink took whole asks for more")
            return
        }
        #expect(sink.ids == [10, 20] && after == 20)
        guard case .finished(let short) = feed(contacts[0..<3], size: 4, room: 10) else {
            Issue.record("a short chunk is the last")
            return
        }
        #expect(short.ids == [10, 20, 30] && !short.more)
        guard case .finished(let full) = feed(contacts[0..<5], size: 5, room: 2) else {
            Issue.record("a refusal finishes the page")
            return
        }
        #expect(full.ids == [10, 20] && full.more)
    }

    @Test func oneBackupAtATime() {
        var turn = BackupTurn()
        #expect(turn.take() == nil)
        #expect(turn.take() == .storage(.busy(retryAfterMs: BackupTurn.retryAfterMs)))
        turn.release()
        #expect(turn.take() == nil)
    }

    @Test func aReadGivenUpOnIsSkippedAsBusyWithNoWait() {
        let cancelled = Locked(false)
        #expect(StorageFailure.skipped(cancelled) == nil)
        cancelled.withLock { $0 = true }
        #expect(StorageFailure.skipped(cancelled) == .busy(retryAfterMs: 0))
    }
}

/// A sink with room for a few contacts, remembering their ids.
private struct Page: ContactExportSink {
    var room: Int
    var ids: [Int64] = []

    init(room: Int) { self.room = room }

    mutating func add(_ contact: Contact) -> Bool {
        guard ids.count < room else { return false }
        ids.append(contact.id)
        return true
    }

    mutating func finish(more: Bool) -> (ids: [Int64], more: Bool) { (ids, more) }
}
