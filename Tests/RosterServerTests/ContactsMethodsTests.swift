import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The output budget as the contacts methods read it, set by the test.
final class SettableOutputBudget: OutputBudgetWatch {
    typealias Host = RecordingCallHost
    var spent = false
    var logger = Logger(level: .emerg)
    func isOutputBudgetSpent(uid: UInt32) -> Bool { spent }
    func sessionFoundEnded(_ hash: [UInt8]) {}
}

/// `contacts.*` on the contacts service over an in-memory storage, with no server and no socket.
@Suite("Contacts methods on an in-memory storage")
struct ContactsMethodsTests {
    let storage = InMemoryStorage()
    let budget = SettableOutputBudget()
    let methods: ContactsMethods<SettableOutputBudget>

    init() {
        methods = ContactsMethods(contacts: ContactsService(storage: storage), output: budget)
    }

    private func call(_ method: String, id: Int64, _ params: [(String, JSONValue)] = [],
                      on host: RecordingCallHost) throws -> RequestCall<RecordingCallHost> {
        let spec = try #require(ContactsMethods<SettableOutputBudget>.table.first { $0.spec.name == method }?.spec)
        return RequestCall(id: .int(id), params: try Params(validating: params, against: spec.params), connection: host)
    }

    /// A connection logged in as a new account.
    private func loggedIn(_ name: String, host id: UInt64) -> RecordingCallHost {
        let host = RecordingCallHost(id: id)
        storage.acting(for: .daemon).createAccount(NewAccount(username: name, display: name, email: nil, passwordHash: "$argon2id$test")) { host.session.user = try? $0.get() }
        host.session.grant = SessionGrant(tokenHash: nil)
        return host
    }

    /// The `result` of the answer at `index` of `host`'s history.
    private func result(_ host: RecordingCallHost, at index: Int) throws -> JSONValue? {
        guard host.history.indices.contains(index), case .answer(let line, _) = host.history[index] else {
            Issue.record("no answer at \(index) in \(host.history)")
            return nil
        }
        return try JSONParser.parse(Array(line.utf8.dropLast()))["result"]
    }

    @Test func nobodyLoggedInIsUnauthenticatedForEveryMethod() throws {
        let host = RecordingCallHost()
        methods.list(try call("contacts.list", id: 1, on: host))
        methods.search(try call("contacts.search", id: 2, [("query", "a")], on: host))
        methods.add(try call("contacts.add", id: 3, [("name", "Ada")], on: host))
        methods.update(try call("contacts.update", id: 4, [("id", 1), ("name", "Ada")], on: host))
        methods.remove(try call("contacts.remove", id: 5, [("id", 1)], on: host))
        methods.importContacts(try call("contacts.import", id: 6, [("format", "csv"), ("data", "")], on: host))
        methods.export(try call("contacts.export", id: 7, [("format", "csv")], on: host))
        #expect(host.history == (1...7).flatMap { id in
            [RecordingCallHost.Event.answered, .error(.unauthenticated, id: .int(Int64(id))), .finished]
        })
    }

    @Test func anAddedContactIsListedAndFoundForItsOwnerOnly() throws {
        let owner = loggedIn("grace1", host: 1)
        let other = loggedIn("henry1", host: 2)
        methods.add(try call("contacts.add", id: 1, [("name", "Ada Lovelace"), ("phone", "+44 20 1234")], on: owner))
        let added = try result(owner, at: 1)?["contact"]
        #expect(added?["name"] == "Ada Lovelace" && added?["phone"] == "+44 20 1234")
        let id = try #require(added?["id"]?.int64Value)

        methods.search(try call("contacts.search", id: 2, [("query", "lovelace")], on: owner))
        #expect(try result(owner, at: 4)?["total"] == 1)
        #expect(try result(owner, at: 4)?["items"]?.arrayValue?.first?["id"]?.int64Value == id)

        methods.list(try call("contacts.list", id: 3, on: other))
        methods.remove(try call("contacts.remove", id: 4, [("id", .int(id))], on: other))
        #expect(try result(other, at: 1) == .object([("items", .array([])), ("total", 0)]))
        #expect(Array(other.history.dropFirst(3)) == [.answered, .error(.notFound, id: .int(4)), .finished])

        methods.remove(try call("contacts.remove", id: 5, [("id", .int(id))], on: owner))
        #expect(Array(owner.history.suffix(3)) == [
            .answered, .answer(#"{"jsonrpc":"2.0","id":5,"result":{}}"# + "\n", id: .int(5)), .finished,
        ])
    }

    @Test func anImportAnswersWhatItAddedSkippedAndRejected() throws {
        let owner = loggedIn("grace1", host: 1)
        let csv = "name,phone,email,note\nAda,,,\n,,,\nAda,,,\n"
        methods.importContacts(try call("contacts.import", id: 1, [("format", "csv"), ("data", .string(csv))], on: owner))
        // A second "Ada" is the same contact again: skipped; a row without a name is rejected with its line.
        #expect(owner.history == [.answered, .answer(#"{"jsonrpc":"2.0","id":1,"result":{"added":1,"skipped":1,"#
            + #""errors":[{"line":3,"reason":"name_required"}],"errors_total":1}}"# + "\n", id: .int(1)), .finished])
    }

    /// Big answers wait while the output budget is spent; small ones do not.
    @Test func aBigPageOrAnExportIsBusyWhileTheOutputBudgetIsSpent() throws {
        let owner = loggedIn("grace1", host: 1)
        budget.spent = true
        methods.list(try call("contacts.list", id: 1, [("limit", .int(Int64(ContactsLimits.bigPage + 1)))], on: owner))
        methods.export(try call("contacts.export", id: 2, [("format", "vcard")], on: owner))
        methods.list(try call("contacts.list", id: 3, [("limit", .int(Int64(ContactsLimits.bigPage)))], on: owner))
        let busy = RosterError.busy(retryAfterMs: ContactsLimits.bigAnswerRetryMs)
        #expect(Array(owner.history.prefix(6)) == [
            .answered, .error(busy, id: .int(1)), .finished, .answered, .error(busy, id: .int(2)), .finished,
        ])
        #expect(try result(owner, at: 7) == .object([("items", .array([])), ("total", 0)]))
    }
}
