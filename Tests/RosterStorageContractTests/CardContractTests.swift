import Foundation
import Glibc
import RosterCore
import RosterRuntime
import RosterStorage
import RosterTestSupport
import Testing

/// Cards and changes (CardDAV): a card put is read back byte for byte with its fields taken from it, every write
/// takes the user's next revision, preconditions hold per contact, removals leave tombstones for 90 days, and a
/// second instance on the same database (another daemon) sees what the first wrote.
@Suite("Storage contract: cards and changes")
struct CardContractTests {
    @Test(arguments: BackendKind.allCases)
    func realClientsCardsComeBackByteForByteWithTheirFieldsTaken(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let ann = try backend.account("annie1").id
        let cards = [("ios", ClientCards.ios), ("google", ClientCards.google), ("photo", ClientCards.photo)]
        for (uid, card) in cards {
            let answer = try backend.value { put(card, uid: uid, for: ann, backend, completion: $0) }
            guard case .created(let stored) = answer else {
                Issue.record("\(uid): \(answer)")
                continue
            }
            #expect(stored.contact.uid == uid)
            let read = try backend.value { backend.storage.acting(for: charge(ann)).readCards([uid], of: ann,
                                                                                           byteLimit: 4 << 20, completion: $0) }
            #expect(read.cards.first?.text == card, "\(uid) came back changed")
            #expect(read.cards.first?.text.utf8.elementsEqual(card.utf8) == true)
            #expect(read.cards.first?.contact.etag == stored.contact.etag)
        }
        let fields = try backend.value { backend.storage.acting(for: charge(ann)).contactChanges(of: ann, since: nil,
                                                                                             limit: 10, completion: $0) }
        guard case .changes(let all) = fields else { Issue.record("\(fields)"); return }
        let byUID = Dictionary(uniqueKeysWithValues: all.changed.map { ($0.uid, $0.draft) })
        #expect(byUID["ios"] == ContactDraft(name: "Johnny Appleseed", phone: "+1 (408) 555-0101",
                                             email: "johnny@example.com", note: "Met at WWDC, likes apples"))
        #expect(byUID["google"] == ContactDraft(name: "Nguyễn Văn Ánh", phone: "+84 90 123 4567",
                                                email: "anh.nguyen@example.org",
                                                note: "A long note that Google folds because it runs past seventy-five octets on one line, and goes on."))
        #expect(byUID["photo"] == ContactDraft(name: "Photo Person", phone: "+44 20 7946 0000", email: "photo@example.net"))
        // The search keys come from the card too.
        let index = try backend.value { backend.storage.acting(for: charge(ann)).loadSearchIndex(of: ann, build: { $0 },
                                                                                             completion: $0) }
        #expect(index.contains { $0.keys.folded == "nguyen van anh" })
    }

    @Test(arguments: BackendKind.allCases)
    func preconditionsHoldPerContact(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let bea = try backend.account("beatrix1").id
        let first = try backend.value { put(ClientCards.simple("Bea One"), uid: "b-1", .ifNoneMatch, for: bea, backend, completion: $0) }
        guard case .created(let created) = first else { Issue.record("\(first)"); return }
        #expect(try backend.value { put(ClientCards.simple("Again"), uid: "b-1", .ifNoneMatch, for: bea, backend, completion: $0) }
                == .preconditionFailed)
        #expect(try backend.value { put(ClientCards.simple("Stale"), uid: "b-1", .ifMatch("r0"), for: bea, backend, completion: $0) }
                == .preconditionFailed)
        #expect(try backend.value { put(ClientCards.simple("Missing"), uid: "nobody", .ifMatch(created.contact.etag), for: bea,
                                        backend, completion: $0) }
                == .preconditionFailed)
        let second = try backend.value { put(ClientCards.simple("Bea Two"), uid: "b-1", .ifMatch(created.contact.etag), for: bea,
                                             backend, completion: $0) }
        guard case .updated(let updated) = second else { Issue.record("\(second)"); return }
        #expect(updated.contact.id == created.contact.id)
        #expect(updated.contact.etag != created.contact.etag)
        #expect(updated.contact.name == "Bea Two")
        // The old etag is stale now, for a put and for a removal.
        #expect(try backend.value { put(ClientCards.simple("Late"), uid: "b-1", .ifMatch(created.contact.etag), for: bea,
                                        backend, completion: $0) }
                == .preconditionFailed)
        #expect(try remove("b-1", .ifMatch(created.contact.etag), of: bea, backend) == .preconditionFailed)
        #expect(try remove("b-1", .ifMatch(updated.contact.etag), of: bea, backend) == .removed(id: created.contact.id))
        #expect(try remove("b-1", .none, of: bea, backend) == .notFound)
        // A bad card writes nothing.
        #expect(try backend.value { put("BEGIN:VCARD\r\nVERSION:2.1\r\nFN:x\r\nEND:VCARD\r\n", uid: "b-2", for: bea, backend,
                                        completion: $0) }
                == .invalid(.unsupportedVersion))
        #expect(try backend.value { put("BEGIN:VCARD\r\nVERSION:4.0\r\nTEL:1\r\nEND:VCARD\r\n", uid: "b-2", for: bea, backend,
                                        completion: $0) }
                == .invalid(CardError(.nameRequired)))
    }

    @Test(arguments: BackendKind.allCases)
    func changesFollowEveryWriteAndTombstonesLastNinetyDays(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let cy = try backend.account("cyrus1").id
        let acting = backend.storage.acting(for: charge(cy))
        let start = try changes(of: cy, since: nil, backend)
        #expect(start.changed.isEmpty && start.removed.isEmpty && !start.more)
        let added = try backend.value { acting.addContact(ContactDraft(name: "Added One"), for: cy, completion: $0) }
        _ = try backend.value { put(ClientCards.simple("Put One"), uid: "put-1", for: cy, backend, completion: $0) }
        let afterWrites = try changes(of: cy, since: start.revision, backend)
        #expect(afterWrites.changed.map(\.name) == ["Added One", "Put One"])
        #expect(ContactUID.isValid(added.contact.uid) && added.contact.uid.count == 36)
        // Nothing new: the same token again, and nothing listed.
        let quiet = try changes(of: cy, since: afterWrites.revision, backend)
        #expect(quiet.changed.isEmpty && quiet.removed.isEmpty && quiet.revision == afterWrites.revision)
        // An update and a removal, paged one at a time.
        _ = try backend.value { acting.updateContact(added.contact.id, of: cy, with: ContactPatch(name: "Renamed", phone: nil,
                                                                                                 email: nil, note: nil),
                                                     completion: $0) }
        #expect(try remove("put-1", .none, of: cy, backend) != .notFound)
        let page1 = try changes(of: cy, since: afterWrites.revision, limit: 1, backend)
        #expect(page1.changed.map(\.name) == ["Renamed"] && page1.removed.isEmpty && page1.more)
        let page2 = try changes(of: cy, since: page1.revision, limit: 1, backend)
        #expect(page2.changed.isEmpty && page2.removed == ["put-1"] && !page2.more)
        // A full sync lists no removals.
        let full = try changes(of: cy, since: nil, backend)
        #expect(full.changed.map(\.name) == ["Renamed"] && full.removed.isEmpty)
        // 90 days later, less a millisecond, the removal is still kept; past it, an older token has expired.
        backend.clock.advance(byMs: ContactChangesRule.tombstoneKeepMs)
        #expect(try changes(of: cy, since: afterWrites.revision, backend).removed == ["put-1"])
        backend.clock.advance(byMs: 1)
        #expect(try backend.value { acting.contactChanges(of: cy, since: afterWrites.revision, limit: 10, completion: $0) }
                == .expired)
        // A token from after the removal is still good, and so is one from the book's future never.
        #expect(try changes(of: cy, since: page2.revision, backend).changed.isEmpty)
        #expect(try backend.value { acting.contactChanges(of: cy, since: page2.revision + 100, limit: 10, completion: $0) }
                == .expired)
    }

    @Test(arguments: BackendKind.allCases)
    func anUpdateRewritesTheSentCardsFieldsAndKeepsTheRest(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let dee = try backend.account("deedee1").id
        let answer = try backend.value { put(ClientCards.ios, uid: "ios", for: dee, backend, completion: $0) }
        guard case .created(let stored) = answer else { Issue.record("\(answer)"); return }
        let patch = ContactPatch(name: "John Appleseed", phone: "+1 408 555 0199", email: "", note: nil)
        let updated = try backend.value { backend.storage.acting(for: charge(dee)).updateContact(stored.contact.id, of: dee,
                                                                                             with: patch, completion: $0) }
        guard case .updated = updated else { Issue.record("\(updated)"); return }
        let card = try backend.value { backend.storage.acting(for: charge(dee)).readCards(["ios"], of: dee, byteLimit: 1 << 20,
                                                                                      completion: $0) }.cards.first?.text
        #expect(card == ClientCards.ios
            .replacingOccurrences(of: "N:Appleseed;Johnny;;;\r\nFN:Johnny Appleseed", with: "N:Appleseed;John;;;\r\nFN:John Appleseed")
            .replacingOccurrences(of: "item1.EMAIL;type=INTERNET;type=pref:johnny@example.com\r\n", with: "")
            .replacingOccurrences(of: "TEL;type=CELL;type=VOICE;type=pref:+1 (408) 555-0101",
                                  with: "TEL;type=CELL;type=VOICE;type=pref:+1 408 555 0199"))
    }

    @Test(arguments: BackendKind.allCases)
    func aSecondInstanceSeesTheChangesAndKeepsIfMatchAtomic(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let eli = try backend.account("elias1").id
        let other = try backend.reopened()
        let first = try backend.value { put(ClientCards.simple("Eli"), uid: "e-1", for: eli, backend, completion: $0) }
        guard case .created(let created) = first else { Issue.record("\(first)"); return }
        let seen = try backend.value { other.acting(for: charge(eli)).contactChanges(of: eli, since: nil, limit: 10, completion: $0) }
        guard case .changes(let there) = seen else { Issue.record("\(seen)"); return }
        #expect(there.changed.map(\.uid) == ["e-1"])
        // Two puts with the same if_match, one through each instance: exactly one wins.
        var answers: [Result<CardPut, StorageFailure>] = []
        for (storage, name) in [(backend.storage, "Mine"), (other, "Theirs")] {
            storage.acting(for: charge(eli)).putCard(ClientCards.simple(name), uid: "e-1", precondition: .ifMatch(created.contact.etag),
                                                     for: eli, session: SessionGrant(tokenHash: nil),
                                                     completion: backend.completion { answers.append($0) })
        }
        try backend.run(until: { answers.count == 2 })
        let won = answers.filter { if case .success(.updated) = $0 { true } else { false } }
        let lost = answers.filter { if case .success(.preconditionFailed) = $0 { true } else { false } }
        #expect(won.count == 1 && lost.count == 1, "\(answers)")
        let after = try backend.value { other.acting(for: charge(eli)).contactChanges(of: eli, since: there.revision, limit: 10,
                                                                                     completion: $0) }
        guard case .changes(let news) = after else { Issue.record("\(after)"); return }
        #expect(news.changed.count == 1)
    }

    @Test(arguments: BackendKind.allCases)
    func anImportedCardKeepsItsOwnUIDWhereTheUserHoldsItNotYet(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let fay = try backend.account("fayfay1").id
        let acting = backend.storage.acting(for: charge(fay))
        let file = "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:card-one\r\nFN:One\r\nEND:VCARD\r\n"
            + "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:card-one\r\nFN:Same UID\r\nEND:VCARD\r\n"
            + "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:bad/uid\r\nFN:Bad UID\r\nEND:VCARD\r\n"
        let first = try backend.value { acting.importContacts(file, format: .vcard, for: fay, completion: $0) }
        #expect(first.added.map(\.contact.name) == ["One", "Same UID", "Bad UID"])
        #expect(first.added.first?.contact.uid == "card-one")
        #expect(first.added.dropFirst().allSatisfy { $0.contact.uid.count == 36 })
        // Imported again with other fields: the UID is held now, so the new contact gets a random one.
        let again = "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:card-one\r\nFN:One Again\r\nEND:VCARD\r\n"
        let second = try backend.value { acting.importContacts(again, format: .vcard, for: fay, completion: $0) }
        #expect(second.added.count == 1 && second.added.first?.contact.uid != "card-one")
        #expect(second.added.first?.contact.uid.count == 36)
        let read = try backend.value { acting.readCards(["card-one"], of: fay, byteLimit: 1 << 20, completion: $0) }
        #expect(read.cards.map(\.contact.name) == ["One"])
    }

    // MARK: Helpers

    private func put(_ card: String, uid: String, _ precondition: CardPrecondition = .none, for user: AccountID,
                     _ backend: Backend, completion: @escaping StorageCompletion<CardPut>) {
        backend.storage.acting(for: charge(user)).putCard(card, uid: uid, precondition: precondition, for: user,
                                                          session: SessionGrant(tokenHash: nil), completion: completion)
    }

    private func remove(_ uid: String, _ precondition: CardPrecondition, of user: AccountID, _ backend: Backend) throws -> CardRemoval {
        try backend.value { backend.storage.acting(for: charge(user)).removeCard(uid: uid, precondition: precondition, of: user,
                                                                                session: SessionGrant(tokenHash: nil),
                                                                                completion: $0) }
    }

    private func changes(of user: AccountID, since: Int64?, limit: Int = 100, _ backend: Backend) throws -> ContactChanges {
        let read = try backend.value { backend.storage.acting(for: charge(user)).contactChanges(of: user, since: since, limit: limit,
                                                                                            completion: $0) }
        guard case .changes(let changes) = read else {
            Issue.record("expired")
            return ContactChanges(changed: [], removed: [], revision: 0, more: false)
        }
        return changes
    }
}

/// Cards as real clients write them: the files beside this test, and a vCard 4.0 card with an ~800 KB photo.
enum ClientCards {
    static let ios = file("ios-3.0.vcf")
    static let google = file("google-3.0.vcf")
    static let photo = photoCard(bytes: 600_000)

    /// A small vCard 4.0 card named `name`.
    static func simple(_ name: String) -> String {
        "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:\(name)\r\nX-CUSTOM;X-PARAM=1:kept\r\nEND:VCARD\r\n"
    }

    /// A vCard 4.0 card with a JPEG-looking PHOTO of `bytes` deterministic bytes in base64 (4/3 of that on the
    /// wire), folded at 75 octets, LF line endings, and unknown X- properties.
    static func photoCard(bytes count: Int) -> String {
        var random = SplitMix64(seed: 0x5EED)
        let data = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        var lines = ["BEGIN:VCARD", "VERSION:4.0", "UID:urn:uuid:0f6d3c2e-0000-4000-8000-000000000001",
                     "FN:Photo Person", "N:Person;Photo;;;", "TEL;VALUE=uri;TYPE=work:tel:+44 20 7946 0000",
                     "EMAIL;PREF=1:photo@example.net", "X-EVOLUTION-FILE-AS:Person\\, Photo"]
        let photo = "PHOTO:data:image/jpeg;base64," + base64(data)
        var folded = ""
        var line = ""
        for character in photo {
            if line.utf8.count == 75 {
                folded += line + "\n "
                line = ""
            }
            line.append(character)
        }
        lines.append(folded + line)
        lines += ["X-UNKNOWN-THING;TYPE=\"a,b\":value; with: colons", "END:VCARD"]
        return lines.joined(separator: "\n") + "\n"
    }

    private static func base64(_ data: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(data.count * 4 / 3 + 4)
        var index = 0
        while index < data.count {
            let chunk = data[index..<min(index + 3, data.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[Int((value >> (18 - 6 * UInt32(position))) & 63)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func file(_ name: String) -> String {
        let directory = String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            .joined(separator: "/"))
        guard let handle = fopen(directory + "/Cards/" + name, "r") else { return "" }
        defer { fclose(handle) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while case let count = fread(&chunk, 1, chunk.count, handle), count > 0 { bytes += chunk[..<count] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
