@testable import RosterPostgres
import RosterStorage
import Testing

/// How an audit entry travels to the other daemons: every field reads back as written (absent and empty apart,
/// whatever the text holds), a payload never reaches PostgreSQL's 8,000-byte limit (an entry too large goes by
/// id), and what is not this format is refused.
@Suite("Audit notifications")
struct AuditNotificationTests {
    private static let peer = AuditPeer(uid: 4_294_967_295, pid: 2_147_483_647, client: "rosterctl 1.0")

    private static let records: [AuditRecord] = [
        AuditRecord(event: .login, username: "bobby1", peer: peer, outcome: .failed, reason: "wrong_password", suppressed: 3),
        AuditRecord(event: .login, username: nil, peer: AuditPeer(uid: 0, pid: -1, client: nil), outcome: .failed,
                    reason: "suppressed", suppressed: 10),
        // Empty is not absent; spaces, percent signs, `=`, controls and non-ASCII neither split nor bend a field.
        AuditRecord(event: .locked, username: "zoë", peer: AuditPeer(uid: 1_000, pid: 42, client: ""),
                    reason: "= stolen 100%\n\tlaptop"),
        AuditRecord(event: .backup, username: "", peer: peer, reason: ""),
        // Issue 17: the address a gateway spoke for, IPv4 and IPv6 (its colons are no separator).
        AuditRecord(event: .login, username: "bobby1", peer: AuditPeer(uid: 998, pid: 7, client: "roster-web", remote: "203.0.113.5"),
                    outcome: .failed, reason: "wrong_password"),
        AuditRecord(event: .register, username: nil, peer: AuditPeer(uid: 998, pid: 7, client: nil, remote: "2001:db8::1")),
    ] + AuditEvent.allCases.map { AuditRecord(event: $0, username: "alice1", peer: peer) }
        // A log-in's method, each, with a remote (empty too) and without.
        + LoginMethod.allCases.flatMap { method in
            [AuditRecord(event: .login, username: "alice1", peer: peer, method: method),
             AuditRecord(event: .login, username: nil, peer: AuditPeer(uid: 998, pid: 7, client: "roster-web", remote: "::1"),
                         outcome: .failed, reason: "unknown_user", suppressed: 2, method: method),
             AuditRecord(event: .login, username: "alice1", peer: AuditPeer(uid: 0, pid: 1, client: nil, remote: ""),
                         method: method)]
        }

    /// The payload the insert's `pg_notify` sends for an entry of `id` and `time`.
    private func sent(_ record: AuditRecord, id: Int64, time: Int64) -> String {
        let payload = AuditNotification.payload(for: record, origin: "0123456789abcdef")
        return payload.head + String(id) + " " + String(time) + payload.tail
    }

    @Test(arguments: records)
    func everyFieldReadsBackAsItWasWritten(_ record: AuditRecord) throws {
        let payload = sent(record, id: Int64.max, time: Int64.min)
        #expect(AuditNotification.isAudit(payload))
        #expect(!payload.contains("\n") && !payload.contains("\t"))
        let (origin, heard) = try AuditNotification.parse(payload)
        #expect(origin == "0123456789abcdef")
        #expect(heard == .entry(AuditEntry(id: Int64.max, timeMs: Int64.min, record: record)))
    }

    @Test func anEntryTooLargeForAPayloadGoesByIdAndNoPayloadReachesTheLimit() throws {
        var record = Self.records[0]
        // The largest that fits, then one byte more: a client name is bounded only by the line limit.
        record.peer.client = ""
        let fixed = sent(record, id: Int64.max, time: Int64.min).utf8.count
        record.peer.client = String(repeating: "c", count: AuditNotification.maxPayloadBytes - fixed)
        let largest = sent(record, id: Int64.max, time: Int64.min)
        #expect(largest.utf8.count == AuditNotification.maxPayloadBytes)
        #expect(try AuditNotification.parse(largest).heard == .entry(AuditEntry(id: Int64.max, timeMs: Int64.min, record: record)))

        for extra in [1, 100_000] {
            record.peer.client = String(repeating: "c", count: AuditNotification.maxPayloadBytes - fixed + extra)
            let byID = sent(record, id: 17, time: 5)
            #expect(byID.utf8.count < 100)
            #expect(try AuditNotification.parse(byID) == ("0123456789abcdef", .stored(id: 17)))
        }
        // Percent-encoding triples a byte: counted as sent, not as given.
        record.peer.client = String(repeating: " ", count: (AuditNotification.maxPayloadBytes - fixed) / 3 + 1)
        #expect(try AuditNotification.parse(sent(record, id: 1, time: 1)).heard == .stored(id: 1))
    }

    @Test func aPayloadOfAnotherFormatIsRefusedAsSuch() throws {
        #expect(!AuditNotification.isAudit("1 abc contacts-changed 3"))
        #expect(!AuditNotification.isAudit("2 abc audit 1 2"))
        #expect(throws: ChangeNotification.ParseFailure.unknownVersion) { try AuditNotification.parse("2 abc audit 1 2") }
        #expect(throws: ChangeNotification.ParseFailure.unknownKind("audit-v2")) { try AuditNotification.parse("1 abc audit-v2 1 2") }
        for malformed in ["1 abc audit", "1 abc audit 1", "1 abc audit-id x 2", "1 abc audit-id 1 2 3",
                          "1 abc audit 1 2 login =a 0 0  succeeded  0 extra", "1 abc audit 1 2 nosuch =a 0 0  succeeded  0",
                          "1 abc audit 1 2 login a 0 0  succeeded  0", "1 abc audit 1 2 login =a -1 0  succeeded  0",
                          "1 abc audit 1 2 login =a 0 0  maybe  0", "1 abc audit 1 2 login =a%zz 0 0  succeeded  0",
                          "1  audit-id 1 2"] {
            #expect(throws: ChangeNotification.ParseFailure.malformed, "\(malformed)") { try AuditNotification.parse(malformed) }
        }
        #expect(try AuditNotification.parse("1 abc audit 1 2 login =a 0 0  succeeded  0").heard
                == .entry(AuditEntry(id: 1, timeMs: 2, record: AuditRecord(event: .login, username: "a",
                                                                           peer: AuditPeer(uid: 0, pid: 0, client: nil)))))
        // A remote field is there with a value or not at all: empty, or more after it, is not this format.
        for malformed in ["1 abc audit 1 2 login =a 0 0  succeeded  0 ", "1 abc audit 1 2 login =a 0 0  succeeded  0 =::1 x"] {
            #expect(throws: ChangeNotification.ParseFailure.malformed, "\(malformed)") { try AuditNotification.parse(malformed) }
        }
    }

    /// A rosterd from before issue 17 reads exactly 13 fields: an entry without a remote is sent so, and one with a
    /// remote adds one field only, so that such a daemon, still running while others are upgraded, reads the rest.
    /// Likewise one from before a log-in's method reads every entry without a method as it did: only an entry with
    /// one has a 15th field (and then a 14th, empty when it has no remote).
    @Test func onlyAnEntryWithARemoteOrAMethodAddsFields() throws {
        for record in Self.records {
            let fields = sent(record, id: 1, time: 2).split(separator: " ", omittingEmptySubsequences: false)
            #expect(fields.count == (record.method != nil ? 15 : record.peer.remote == nil ? 13 : 14), "\(record)")
            if let method = record.method {
                #expect(fields[14] == "=" + method.rawValue)
                #expect(fields[13].isEmpty == (record.peer.remote == nil))
            }
        }
    }

    /// METHOD is `=` and a method; one this rosterd does not know (a newer one's, or another case) reads as none,
    /// and the entry is still heard. Without `=`, or with something after it, the payload is not this format.
    @Test func aMethodReadsBackAndAnUnknownOneAsNone() throws {
        let plain = AuditRecord(event: .login, username: "a", peer: AuditPeer(uid: 0, pid: 0, client: nil))
        func heard(_ payload: String) throws -> AuditRecord? {
            guard case .entry(let entry) = try AuditNotification.parse(payload).heard else { return nil }
            return entry.record
        }
        var passkey = plain
        passkey.method = .passkey
        #expect(try heard("1 abc audit 1 2 login =a 0 0  succeeded  0  =passkey") == passkey)
        passkey.peer.remote = "::1"
        #expect(try heard("1 abc audit 1 2 login =a 0 0  succeeded  0 =::1 =passkey") == passkey)
        for unknown in ["=smartcard", "=PASSKEY", "=", "=pass%6bey%00"] {
            #expect(try heard("1 abc audit 1 2 login =a 0 0  succeeded  0  " + unknown) == plain, "\(unknown)")
        }
        for malformed in ["1 abc audit 1 2 login =a 0 0  succeeded  0  passkey", "1 abc audit 1 2 login =a 0 0  succeeded  0  ",
                          "1 abc audit 1 2 login =a 0 0  succeeded  0 ::1 =passkey",
                          "1 abc audit 1 2 login =a 0 0  succeeded  0  =pass%zz",
                          "1 abc audit 1 2 login =a 0 0  succeeded  0  =passkey x"] {
            #expect(throws: ChangeNotification.ParseFailure.malformed, "\(malformed)") { try AuditNotification.parse(malformed) }
        }
    }
}

extension AuditRecord: CustomTestStringConvertible {
    public var testDescription: String { "\(event.rawValue) \(username ?? "-") \(outcome.rawValue)" }
}
