import Glibc
import RosterProtocol
import Testing

/// protocol.md §Contacts (the methods and the contacts form) over the real socket.
@Suite("Contacts against the real rosterd", .serialized)
struct ContactsTests {
    /// A connection logged in as a fresh user.
    private func loggedIn(_ daemon: TestDaemon, _ name: String, throttleMs: Int = 300) throws -> TestClient {
        let client = try daemon.connect()
        _ = try client.call("session.hello", ["locale": "en", "timing": ["throttle_ms": .int(throttleMs)]])
        _ = try client.call("users.register", ["username": .string(name), "password": "secret1"])
        #expect(try client.call("auth.login", ["username": .string(name), "password": "secret1"])["result"] != nil)
        return client
    }

    private func add(_ client: TestClient, _ name: String, phone: String? = nil) throws -> Int64 {
        var params: [(String, JSONValue)] = [("name", .string(name))]
        if let phone { params.append(("phone", .string(phone))) }
        return try client.call("contacts.add", .object(params))["result"]?["contact"]?["id"]?.int64Value ?? -1
    }

    private func names(_ answer: JSONValue) -> [String] {
        (answer["result"]?["items"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
    }

    @Test func searchFindsNamesInEveryScript() throws {
        let daemon = try TestDaemon()
        let client = try loggedIn(daemon, "sofia1")
        for name in ["张三", "王五", "김수현", "Nguyễn Văn Ánh", "Đặng Thu Thảo", "Alice Smith"] { _ = try add(client, name) }
        _ = try add(client, "Bob Jones", phone: "+1 (555) 010-9999")
        let cases: [(String, String)] = [
            ("zs", "张三"), ("zhang", "张三"), ("张", "张三"), ("ww", "王五"), ("ㄱㅅ", "김수현"), ("김수", "김수현"),
            ("nguyen", "Nguyễn Văn Ánh"), ("anh", "Nguyễn Văn Ánh"), ("nva", "Nguyễn Văn Ánh"),
            ("dang", "Đặng Thu Thảo"), ("dtt", "Đặng Thu Thảo"), ("as", "Alice Smith"), ("smi", "Alice Smith"),
            ("ALICE", "Alice Smith"), ("ａｌｉｃｅ", "Alice Smith"), ("ＡＬＩＣＥ", "Alice Smith"),
            ("555010", "Bob Jones"), ("010-99", "Bob Jones"),
        ]
        for (query, expected) in cases {
            let found = names(try client.call("contacts.search", ["query": .string(query)]))
            #expect(found.first == expected, "\(query) → \(found)")
        }
        let all = try client.call("contacts.list", ["limit": 3, "offset": 1])
        #expect(all["result"]?["total"] == 7)
        #expect(names(all).count == 3)
    }

    @Test func rankingPutsExactBeforePrefixBeforeInitialsBeforeContains() throws {
        let daemon = try TestDaemon()
        let client = try loggedIn(daemon, "tomas1")
        for name in ["Ann Lee", "Anna", "Ann", "Joanna", "Amy Nina Ng"] { _ = try add(client, name) }
        #expect(names(try client.call("contacts.search", ["query": "ann"])) == ["Ann", "Ann Lee", "Anna", "Amy Nina Ng", "Joanna"])
    }

    @Test func contactsNeedALogInAndNeverCrossUsers() throws {
        let daemon = try TestDaemon()
        let anonymous = try daemon.connect()
        #expect(try anonymous.call("contacts.list")["error"]?["data"]?["reason"] == "unauthenticated")
        #expect(try anonymous.call("form.open", ["form": "contacts"])["error"]?["data"]?["reason"] == "unauthenticated")
        let owner = try loggedIn(daemon, "ursula1")
        let id = try add(owner, "Private Person")
        let other = try loggedIn(daemon, "victor1")
        #expect(try other.call("contacts.update", ["id": .int(id), "name": "Mine now"])["error"]?["data"]?["reason"] == "not_found")
        #expect(try other.call("contacts.remove", ["id": .int(id)])["error"]?["data"]?["reason"] == "not_found")
        #expect(try other.call("contacts.search", ["query": "private"])["result"]?["total"] == 0)
        for guess in 1...20 {
            #expect(try other.call("contacts.remove", ["id": .int(guess)])["error"]?["data"]?["reason"] == "not_found")
        }
        #expect(names(try owner.call("contacts.list")) == ["Private Person"])
        #expect(try other.call("contacts.update", ["id": 999_999, "name": "x"])["error"]?["data"]?["reason"] == "not_found")
    }

    @Test func updatesValidateAndEmptyStringsClear() throws {
        let daemon = try TestDaemon()
        let client = try loggedIn(daemon, "wanda1")
        let id = try add(client, "Wanda Two", phone: "123")
        let updated = try client.call("contacts.update", ["id": .int(id), "phone": "", "note": "met at the café"])
        #expect(updated["result"]?["contact"]?["phone"] == .null)
        #expect(updated["result"]?["contact"]?["note"] == "met at the café")
        #expect(updated["result"]?["contact"]?["name"] == "Wanda Two")
        let bad = try client.call("contacts.update", ["id": .int(id), "phone": "call me"])
        #expect(bad["error"]?["data"] == ["reason": "invalid_phone", "field": "phone"])
        #expect(try client.call("contacts.add", ["name": "X", "email": "nope"])["error"]?["data"]?["reason"] == "invalid_email")
        #expect(try client.call("contacts.remove", ["id": .int(id)])["result"] == [:])
        #expect(try client.call("contacts.list")["result"]?["total"] == 0)
    }

    @Test func exportThenImportReproducesTheList() throws {
        let daemon = try TestDaemon()
        let source = try loggedIn(daemon, "xavier1")
        let tricky = ["Smith, John; Jr.", "\"Quoted\" Name", "张三", "김수현", "Nguyễn Văn Ánh", "Emoji 🐯 Person"]
        for name in tricky {
            _ = try source.call("contacts.add", ["name": .string(name), "phone": "+84 (28) 1234-5678",
                                                 "email": "a.b@example.com",
                                                 "note": .string("line one\nline two, with; punctuation " + String(repeating: "長", count: 60))])
        }
        for format in ["vcard", "csv"] {
            let exported = try source.call("contacts.export", ["format": .string(format)])["result"]?["data"]?.stringValue ?? ""
            #expect(!exported.isEmpty)
            let target = try loggedIn(daemon, "yara\(format)")
            let imported = try target.call("contacts.import", ["format": .string(format), "data": .string(exported)])
            #expect(imported["result"] == ["added": 6, "skipped": 0, "errors": [], "errors_total": 0], "\(format)")
            let again = try target.call("contacts.import", ["format": .string(format), "data": .string(exported)])
            #expect(again["result"] == ["added": 0, "skipped": 6, "errors": [], "errors_total": 0], "\(format)")
            let strip: (JSONValue) -> [JSONValue] = { answer in
                (answer["result"]?["items"]?.arrayValue ?? []).map { item in
                    .object([("name", item["name"] ?? .null), ("phone", item["phone"] ?? .null),
                             ("email", item["email"] ?? .null), ("note", item["note"] ?? .null)])
                }
            }
            #expect(strip(try target.call("contacts.list")) == strip(try source.call("contacts.list")), "\(format)")
        }
    }

    @Test func importReportsEveryRejectWithItsLineAndKeepsTheRest() throws {
        let daemon = try TestDaemon()
        let client = try loggedIn(daemon, "zelda1")
        let csv = "name,phone\r\nGood One,123\r\n,456\r\nBad Phone,letters\r\nGood Two,\r\n"
        let result = try client.call("contacts.import", ["format": "csv", "data": .string(csv)])["result"]
        #expect(result?["added"] == 2)
        #expect(result?["errors"] == [["line": 3, "reason": "name_required"], ["line": 4, "reason": "invalid_phone"]])
        let vcard = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Card One\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:4.0\r\nTEL:1\r\nEND:VCARD\r\n"
        let cards = try client.call("contacts.import", ["format": "vcard", "data": .string(vcard)])["result"]
        #expect(cards?["added"] == 1)
        #expect(cards?["errors"] == [["line": 5, "reason": "name_required"]])
        #expect(try client.call("contacts.import", ["format": "xml", "data": ""])["error"]?["data"]?["reason"] == "out_of_range")
    }

    /// `contacts.import` once crashed the daemon (a trap in the vCard parser, SIGILL) on one line whose parameter
    /// has no name: every connection died with it. The line now rejects its card as any malformed line does, the
    /// rest is imported, and the daemon answers this connection and every other one after it.
    @Test func aVCardParameterWithoutANameRejectsItsCardAndTheDaemonLivesOn() throws {
        let daemon = try TestDaemon()
        let bystander = try loggedIn(daemon, "bianca1")
        let client = try loggedIn(daemon, "yusuf1")
        let bad = ["X;:y", "NOTE;;TYPE=a:y", "NOTE;=:y"]
        let vcard = bad.enumerated().map { "BEGIN:VCARD\r\nFN:Card \($0.offset)\r\n\($0.element)\r\nEND:VCARD\r\n" }
            .joined() + "BEGIN:VCARD\r\nFN:Kept\r\nEND:VCARD\r\nX;:stray\r\n"
        let imported = try client.call("contacts.import", ["format": "vcard", "data": .string(vcard)])
        #expect(imported["result"] == ["added": 1, "skipped": 0, "errors": [
            ["line": 3, "reason": "malformed_line"], ["line": 7, "reason": "malformed_line"],
            ["line": 11, "reason": "malformed_line"], ["line": 16, "reason": "unexpected_line"],
        ], "errors_total": 4])
        #expect(names(try client.call("contacts.list")) == ["Kept"])
        #expect(try bystander.call("session.whoami")["result"]?["user"]?["username"] == "bianca1")
        #expect(daemon.poll() == nil, "rosterd exited: \(daemon.stderr)")
    }

    @Test func theContactsFormStreamsThrottledResultsAndFollowsChanges() throws {
        let daemon = try TestDaemon()
        let client = try loggedIn(daemon, "amir12", throttleMs: 200)
        for name in ["Alice Smith", "Alan Turing", "Bob Jones"] { _ = try add(client, name) }
        let opened = try client.call("form.open", ["form": "contacts"])
        #expect(opened["result"]?["fields"]?.arrayValue?.first?["name"] == "query")
        let first = try client.waitForEvent { $0["type"] == "results" }
        #expect(first["query"] == "")
        #expect(first["total"] == 3)

        // Three quick inputs: the first is searched at once, the window ends with the newest.
        for query in ["a", "al", "ali"] {
            _ = try client.call("form.input", ["form": "contacts", "field": "query", "value": .string(query)])
        }
        let immediate = try client.waitForEvent { $0["type"] == "results" }
        #expect(immediate["query"] == "a")
        let last = try client.waitForEvent { $0["type"] == "results" }
        #expect(last["query"] == "ali")
        #expect((last["items"]?.arrayValue ?? []).map { $0["name"] ?? .null } == ["Alice Smith"])

        // Another connection of the same user adds a match: fresh results arrive unasked.
        let other = try daemon.connect()
        _ = try other.call("auth.login", ["username": "amir12", "password": "secret1"])
        _ = try add(other, "Alina Chen")
        let pushed = try client.waitForEvent { $0["type"] == "results" }
        #expect(pushed["query"] == "ali")
        #expect(pushed["total"] == 2)
        #expect(try client.call("form.submit", ["form": "contacts"])["error"]?["data"]?["reason"] == "not_submittable")
        #expect(try client.call("form.input", ["form": "contacts", "field": "name", "value": "x"])["error"]?["data"]?["reason"]
                == "unknown_field")
    }

    /// protocol.md "Cards and changes (CardDAV)": a card of about 1 MiB (a photo) is put once logged in, comes back
    /// byte for byte and names the contact; before log-in such a line is too large, and an unauthenticated call is
    /// refused; changes lists the put and the removal.
    @Test func aBigCardIsPutOnceLoggedInAndComesBackByteForByte() throws {
        let daemon = try TestDaemon()
        let before = try daemon.connect()
        let photo = String(repeating: "QUJD", count: 250_000)
        let card = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Photo Person\r\nX-A;Y=\"1:2\":z\r\nPHOTO:data:image/jpeg;base64,\(photo)\r\nEND:VCARD\r\n"
        let put: JSONValue = ["id": 1, "method": "contacts.put_vcard", "params": ["uid": "photo", "vcard": .string(card)]]
        try before.send(JSONWriter.encode(put) + Array("\n".utf8))
        #expect(try before.readLine()["error"]?["data"]?["reason"] == "request_too_large")
        #expect(try before.call("contacts.changes", [:])["error"]?["data"]?["reason"] == "unauthenticated")

        let client = try loggedIn(daemon, "photos1")
        let start = try #require(try client.call("contacts.changes", [:])["result"]?["token"]?.stringValue)
        let answer = try client.call("contacts.put_vcard", ["uid": "photo", "vcard": .string(card)])
        #expect(answer["result"]?["created"] == true)
        let read = try client.call("contacts.get_vcard", ["uid": "photo"])["result"]
        #expect(read?["vcard"] == .string(card))
        #expect(read?["etag"] == answer["result"]?["etag"])
        #expect(try client.call("contacts.search", ["query": "photo"])["result"]?["total"] == 1)
        #expect(try client.call("contacts.remove", ["uid": "photo", "if_match": "r0"])["error"]?["code"] == 1020)
        #expect(try client.call("contacts.remove", ["uid": "photo"])["result"] == [:])
        let changes = try client.call("contacts.changes", ["since": .string(start)])["result"]
        #expect(changes?["removed"] == ["photo"] && changes?["changed"] == [])
        #expect(try client.call("contacts.get_vcard", ["uid": "photo"])["error"]?["data"]?["reason"] == "not_found")
    }
}
