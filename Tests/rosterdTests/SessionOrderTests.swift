import Glibc
import RosterProtocol
import Testing

/// A revoked token ends every session bound to it, and every request is carried out with
/// the session as the requests before it on that connection left it, however they are pipelined.
@Suite("Sessions across connections and in pipelined order", .serialized)
struct SessionOrderTests {
    private func registered(_ daemon: TestDaemon, _ name: String) throws -> TestClient {
        let client = try daemon.connect()
        _ = try client.call("users.register", ["username": .string(name), "password": "secret1"])
        return client
    }

    private func login(_ name: String, id: Int, password: String = "secret1") -> String {
        #"{"id":\#(id),"method":"auth.login","params":{"username":"\#(name)","password":"\#(password)"}}"# + "\n"
    }

    /// Every line up to the answers for `ids`, in arrival order (answers and events).
    private func read(_ client: TestClient, untilAnswered ids: Set<Int64>) throws -> [JSONValue] {
        var lines: [JSONValue] = []
        var waiting = ids
        while !waiting.isEmpty {
            let line = try client.readLine()
            lines.append(line)
            if let id = line["id"]?.int64Value { waiting.remove(id) }
        }
        return lines
    }

    private func answer(_ id: Int64, in lines: [JSONValue]) -> JSONValue? {
        lines.first { $0["id"]?.int64Value == id }
    }

    @Test func loggingOutEndsEverySessionThatResumedTheToken() throws {
        let daemon = try TestDaemon()
        let owner = try registered(daemon, "erin12")
        guard let token = try owner.call("auth.login", ["username": "erin12", "password": "secret1"])["result"]?["token"] else {
            Issue.record("no token")
            return
        }
        let resumed = [try daemon.connect(), try daemon.connect()]
        for client in resumed {
            #expect(try client.call("session.resume", ["token": token])["result"] == ["username": "erin12"])
            #expect(try client.call("form.open", ["form": "contacts"])["result"] != nil)
        }
        // A log-in of its own is another token: revoking the owner's leaves it alone.
        let separate = try daemon.connect()
        _ = try separate.call("auth.login", ["username": "erin12", "password": "secret1"])
        _ = try resumed[0].call("contacts.add", ["name": "Zoe Quinn"])

        #expect(try owner.call("session.logout")["result"] == [:])
        for client in resumed {
            _ = try client.waitForEvent { $0["type"] == "session" && $0["user"] == .null }
            #expect(try client.call("contacts.list")["error"]?["data"]?["reason"] == "unauthenticated")
            #expect(try client.call("session.whoami")["result"] == ["user": nil])
            let typed = try client.call("form.input", ["form": "contacts", "field": "query", "value": "zoe"])
            #expect(typed["error"]?["data"]?["reason"] == "form_not_open")
        }
        #expect(try separate.call("contacts.list")["result"]?["total"] == 1)
        #expect(try daemon.connect().call("session.resume", ["token": token])["error"]?["data"]?["reason"] == "not_found")
    }

    @Test func requestsPipelinedAfterALogInSeeTheLoggedInSession() throws {
        let daemon = try TestDaemon()
        let client = try registered(daemon, "fay123")
        try client.send(login("fay123", id: 1) + #"{"id":2,"method":"session.whoami"}"# + "\n"
                        + #"{"id":3,"method":"contacts.list"}"# + "\n")
        let lines = try read(client, untilAnswered: [1, 2, 3])
        #expect(answer(2, in: lines)?["result"] == ["user": ["username": "fay123"]])
        #expect(answer(3, in: lines)?["result"] == ["items": [], "total": 0])
        // In order: the log-in's event and answer come before what waited for it.
        let order = lines.compactMap { $0["id"]?.int64Value }
        #expect(order == [1, 2, 3])
    }

    @Test func requestsPipelinedAfterAResumeSeeTheResumedSession() throws {
        let daemon = try TestDaemon()
        let owner = try registered(daemon, "gus123")
        _ = try owner.call("auth.login", ["username": "gus123", "password": "secret1"])
        _ = try owner.call("contacts.add", ["name": "Ann Lee"])
        guard let token = try owner.call("auth.login", ["username": "gus123", "password": "secret1"])["result"]?["token"]?
            .stringValue else {
            Issue.record("no token")
            return
        }
        let client = try daemon.connect()
        try client.send(#"{"id":1,"method":"session.resume","params":{"token":"\#(token)"}}"# + "\n"
                        + #"{"id":2,"method":"contacts.list"}"# + "\n" + #"{"id":3,"method":"session.whoami"}"# + "\n")
        let lines = try read(client, untilAnswered: [1, 2, 3])
        #expect(answer(2, in: lines)?["result"]?["total"] == 1)
        #expect(answer(3, in: lines)?["result"] == ["user": ["username": "gus123"]])
    }

    @Test func requestsPipelinedAfterALogOutSeeNobody() throws {
        let daemon = try TestDaemon()
        let client = try registered(daemon, "hal123")
        _ = try client.call("auth.login", ["username": "hal123", "password": "secret1"])
        try client.send(#"{"id":1,"method":"session.logout"}"# + "\n" + #"{"id":2,"method":"session.whoami"}"# + "\n"
                        + #"{"id":3,"method":"contacts.list"}"# + "\n" + #"{"id":4,"method":"form.open","params":{"form":"contacts"}}"# + "\n")
        let lines = try read(client, untilAnswered: [1, 2, 3, 4])
        #expect(answer(1, in: lines)?["result"] == [:])
        #expect(answer(2, in: lines)?["result"] == ["user": nil])
        #expect(answer(3, in: lines)?["error"]?["data"]?["reason"] == "unauthenticated")
        #expect(answer(4, in: lines)?["error"]?["data"]?["reason"] == "unauthenticated")
    }

    @Test func requestsPipelinedAfterAFailedLogInSeeTheSessionAsItWas() throws {
        let daemon = try TestDaemon()
        let client = try registered(daemon, "ida123")
        _ = try registered(daemon, "jon123")
        try client.send(login("ida123", id: 1, password: "wrong12") + #"{"id":2,"method":"session.whoami"}"# + "\n")
        let failed = try read(client, untilAnswered: [1, 2])
        #expect(answer(1, in: failed)?["error"]?["data"]?["reason"] == "wrong_password")
        #expect(answer(2, in: failed)?["result"] == ["user": nil])
        // Logged in as one user, a failed log-in as another leaves the first in place.
        _ = try client.call("auth.login", ["username": "ida123", "password": "secret1"])
        try client.send(login("jon123", id: 3, password: "wrong12") + #"{"id":4,"method":"session.whoami"}"# + "\n")
        let kept = try read(client, untilAnswered: [3, 4])
        #expect(answer(4, in: kept)?["result"] == ["user": ["username": "ida123"]])
    }

    /// Writes sent before a log-out are carried out in the session they were sent in: the log-out waits for them,
    /// and only a revocation from elsewhere stops a write still queued.
    @Test func writesPipelinedBeforeALogOutAreAllKept() throws {
        // Room in the queue for every write, so that each is queued before the log-out is read.
        let daemon = try TestDaemon(config: "[Server]\nMaxQueuedJobsPerConnection=1000\nMaxQueuedJobsPerUser=1000\n")
        let client = try registered(daemon, "nia123")
        var batch = login("nia123", id: 1)
        let writes = 2...41
        for id in writes {
            if id % 4 == 0 {
                batch += #"{"id":\#(id),"method":"contacts.import","params":{"format":"csv","data":"name\r\nP\#(id)a\r\nP\#(id)b\r\n"}}"# + "\n"
            } else {
                batch += #"{"id":\#(id),"method":"contacts.add","params":{"name":"P\#(id)"}}"# + "\n"
            }
        }
        batch += #"{"id":42,"method":"session.logout"}"# + "\n" + #"{"id":43,"method":"contacts.list"}"# + "\n"
        try client.send(batch)
        let lines = try read(client, untilAnswered: Set(1...43))
        let refused = writes.filter { answer(Int64($0), in: lines)?["error"] != nil }
        #expect(refused.isEmpty, "refused: \(refused.map { answer(Int64($0), in: lines)?["error"]?["data"]?["reason"] ?? .null })")
        #expect(answer(42, in: lines)?["result"] == [:])
        #expect(answer(43, in: lines)?["error"]?["data"]?["reason"] == "unauthenticated")
        _ = try client.call("auth.login", ["username": "nia123", "password": "secret1"])
        let expected = writes.count + writes.filter { $0 % 4 == 0 }.count
        #expect(try client.call("contacts.list", ["limit": 100])["result"]?["total"] == .int(Int64(expected)))
    }

    @Test func everythingInOneWriteEndsAsItWasSent() throws {
        let daemon = try TestDaemon()
        let client = try registered(daemon, "kim123")
        _ = try registered(daemon, "lea123")
        var batch = login("kim123", id: 1) + #"{"id":2,"method":"session.whoami"}"# + "\n"
        batch += #"{"id":3,"method":"contacts.add","params":{"name":"Max Mu"}}"# + "\n"
        batch += #"{"id":4,"method":"session.logout"}"# + "\n" + #"{"id":5,"method":"contacts.list"}"# + "\n"
        batch += login("lea123", id: 6) + #"{"id":7,"method":"contacts.list"}"# + "\n"
        batch += #"{"id":8,"method":"session.whoami"}"# + "\n"
        try client.send(batch)
        let lines = try read(client, untilAnswered: Set(1...8))
        #expect(answer(2, in: lines)?["result"] == ["user": ["username": "kim123"]])
        #expect(answer(3, in: lines)?["result"]?["contact"]?["name"] == "Max Mu")
        #expect(answer(5, in: lines)?["error"]?["data"]?["reason"] == "unauthenticated")
        #expect(answer(7, in: lines)?["result"]?["total"] == 0)
        #expect(answer(8, in: lines)?["result"] == ["user": ["username": "lea123"]])
        let sessions = lines.filter { $0["params"]?["type"] == "session" }.map { $0["params"]?["user"] ?? .null }
        #expect(sessions == ["kim123", nil, "lea123"])
    }

    @Test func theRegisterRulesNeedNotWaitForALogIn() throws {
        let daemon = try TestDaemon()
        let client = try registered(daemon, "max123")
        _ = try client.call("session.hello", ["timing": ["debounce_ms": 0]])
        _ = try client.call("form.open", ["form": "register"])
        try client.send(login("max123", id: 1) + #"{"id":2,"method":"users.check_username","params":{"username":"max123"}}"# + "\n"
                        + #"{"id":3,"method":"form.input","params":{"form":"register","field":"username","value":"ned123"}}"# + "\n")
        let lines = try read(client, untilAnswered: [1, 2, 3])
        #expect(answer(2, in: lines)?["result"]?["code"] == "taken")
        #expect(answer(3, in: lines)?["result"] == ["rev": 1])
        // Neither waited for the log-in's hashing.
        let order = lines.compactMap { $0["id"]?.int64Value }
        #expect(order.firstIndex(of: 2) ?? 9 < order.firstIndex(of: 1) ?? 0)
        #expect(order.firstIndex(of: 3) ?? 9 < order.firstIndex(of: 1) ?? 0)
    }

    @Test func aLogInFormSubmitIsAnAuthChangeToo() throws {
        let daemon = try TestDaemon()
        let client = try registered(daemon, "ola123")
        _ = try client.call("session.hello", ["timing": ["debounce_ms": 0]])
        _ = try client.call("form.open", ["form": "login"])
        _ = try client.call("form.input", ["form": "login", "field": "username", "value": "ola123"])
        _ = try client.waitForField("username", state: "valid")
        _ = try client.call("form.input", ["form": "login", "field": "password", "value": "secret1"])
        _ = try client.waitForField("password", state: "valid")
        try client.send(#"{"id":1,"method":"form.submit","params":{"form":"login"}}"# + "\n"
                        + #"{"id":2,"method":"form.submit","params":{"form":"login"}}"# + "\n"
                        + #"{"id":3,"method":"contacts.list"}"# + "\n")
        let lines = try read(client, untilAnswered: [1, 2, 3])
        #expect(answer(1, in: lines)?["result"]?["username"] == "ola123")
        // A second submit joins the one running: one log-in, one token.
        #expect(answer(2, in: lines)?["result"] == answer(1, in: lines)?["result"])
        #expect(answer(3, in: lines)?["result"]?["total"] == 0)
    }

    @Test func aPeerThatPipelinesPastTheBudgetGetsBusyNotAHang() throws {
        // By default a connection is no longer read once 64 of its requests wait (back-pressure, see
        // BackPressureTests), so only a daemon that lets more be in flight reaches this budget.
        let daemon = try TestDaemon(config: "[Server]\nMaxRequestsInFlight=100000\n")
        let client = try registered(daemon, "pam123")
        let count = 1_100
        var batch = login("pam123", id: 0)
        for id in 1...count { batch += #"{"id":\#(id),"method":"session.whoami"}"# + "\n" }
        try client.send(batch)
        let lines = try read(client, untilAnswered: Set((0...count).map(Int64.init)))
        let busy = lines.filter { $0["error"]?["data"]?["reason"] == "busy" }
        let served = lines.filter { $0["result"]?["user"] == ["username": "pam123"] }
        #expect(busy.count + served.count == count)
        #expect(served.count >= 1_000)
        #expect(busy.count > 0)
        #expect(busy.allSatisfy { ($0["error"]?["data"]?["retry_after_ms"]?.int64Value ?? 0) > 0 })
        #expect(try client.call("session.whoami")["result"] == ["user": ["username": "pam123"]])
    }

    @Test func aHalfClosedPeerGetsTheHeldAnswersToo() throws {
        let daemon = try TestDaemon()
        let client = try registered(daemon, "quo123")
        try client.send(login("quo123", id: 1) + #"{"id":2,"method":"session.whoami"}"# + "\n" + "not json\n")
        client.shutdownWrite()
        var lines: [JSONValue] = []
        while let raw = try client.readRawLine() { lines.append(try JSONParser.parse(Array(raw.utf8))) }
        #expect(answer(2, in: lines)?["result"] == ["user": ["username": "quo123"]])
        #expect(lines.last?["error"]?["data"]?["reason"] == "parse_error")
    }
}
