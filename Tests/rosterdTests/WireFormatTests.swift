import Glibc
import RosterProtocol
import Testing

/// protocol.md §Framing, §Envelope and §Errors over the real socket: every rule a client can see.
@Suite("Wire format against the real rosterd", .serialized)
struct WireFormatTests {
    @Test func helloAnswersWithServerVersionLocaleAndTiming() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        let answer = try client.call("session.hello", ["locale": "en", "client": "test", "timing": ["debounce_ms": 0]])
        #expect(answer["jsonrpc"] == "2.0")
        #expect(answer["result"]?["server"] == "rosterd")
        #expect(answer["result"]?["protocol"] == 1)
        #expect(answer["result"]?["locale"] == "en")
        #expect(answer["result"]?["timing"] == ["debounce_ms": 0, "throttle_ms": 300])
        let defaults = try daemon.connect().call("session.hello")
        #expect(defaults["result"]?["locale"] == "zh-Hans")
        #expect(defaults["result"]?["timing"] == ["debounce_ms": 500, "throttle_ms": 300])
    }

    @Test func everyErrorRuleIsAnsweredAndTheConnectionGoesOn() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        _ = try client.call("session.hello", ["locale": "en"])
        let cases: [(line: String, id: JSONValue, code: Int, reason: String)] = [
            ("not json", .null, -32700, "parse_error"),
            ("{\"id\":1,\"method\":\"x\"", .null, -32700, "parse_error"),
            ("[]", .null, -32600, "invalid_request"),
            ("42", .null, -32600, "invalid_request"),
            ("{\"id\":2}", 2, -32600, "invalid_request"),
            ("{\"id\":3,\"method\":7}", 3, -32600, "invalid_request"),
            ("{\"id\":4,\"jsonrpc\":\"1.0\",\"method\":\"session.whoami\"}", 4, -32600, "invalid_request"),
            ("{\"id\":{\"a\":1},\"method\":\"session.whoami\"}", .null, -32600, "invalid_request"),
            ("{\"id\":5,\"method\":\"no.such\"}", 5, -32601, "method_not_found"),
            ("{\"id\":6,\"method\":\"session.hello\",\"params\":{\"locale\":3}}", 6, -32602, "wrong_type"),
            ("{\"id\":7,\"method\":\"session.hello\",\"params\":{\"bogus\":1}}", 7, -32602, "unknown_param"),
            ("{\"id\":8,\"method\":\"session.hello\",\"params\":{\"timing\":{\"debounce_ms\":10001}}}", 8, -32602, "out_of_range"),
            ("{\"id\":9,\"method\":\"session.hello\",\"params\":{\"locale\":\"fr\"}}", 9, -32602, "unsupported_locale"),
            ("{\"id\":\"s\",\"method\":\"session.hello\",\"params\":[1]}", "s", -32602, "wrong_type"),
            // A key twice is never resolved to one of its values, even in the plain fast lane's shape.
            ("{\"id\":10,\"method\":\"session.logout\",\"method\":\"session.whoami\"}", 10, -32600, "invalid_request"),
            ("{\"id\":11,\"method\":\"session.hello\",\"params\":{\"locale\":\"en\",\"locale\":\"ko\"}}", 11, -32600,
             "invalid_request"),
            ("{\"id\":12,\"id\":13,\"method\":\"session.whoami\"}", .null, -32600, "invalid_request"),
            ("{\"id\":14,\"method\":\"users.check_username\",\"params\":{\"username\":\"a\",\"username\":\"b\"}}", 14,
             -32600, "invalid_request"),
            ("{\"id\":15,\"method\":\"users.check_username\",\"params\":{\"username\":\"a\"},\"id\":15}", .null, -32600,
             "invalid_request"),
        ]
        for entry in cases {
            try client.send(entry.line + "\n")
            let answer = try client.readLine()
            #expect(answer["jsonrpc"] == "2.0", "\(entry.line)")
            #expect(answer["id"] == entry.id, "\(entry.line)")
            #expect(answer["error"]?["code"]?.int64Value == Int64(entry.code), "\(entry.line)")
            #expect(answer["error"]?["data"]?["reason"] == .string(entry.reason), "\(entry.line)")
            #expect(answer["error"]?["message"]?.stringValue?.isEmpty == false, "\(entry.line)")
            if entry.code == -32600, entry.line.contains("\"id\":1") {
                #expect(answer["error"]?["data"]?["problem"] == "duplicate_member", "\(entry.line)")
            }
        }
        #expect(try client.call("session.whoami")["result"] == ["user": nil])
    }

    @Test func notificationsAreCarriedOutButNeverAnswered() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        try client.send("{\"method\":\"session.hello\",\"params\":{\"locale\":\"ko\"}}\n")
        try client.send("{\"method\":\"no.such\"}\n")
        try client.send("{\"method\":\"session.hello\",\"params\":{\"bogus\":1}}\n")
        try client.send("{\"id\":1,\"method\":\"no.such\"}\n")
        let answer = try client.readLine()
        #expect(answer["id"] == 1)
        #expect(answer["error"]?["message"] == "no.such 메서드가 없습니다")
    }

    @Test func blankLinesAndCRLFAreAccepted() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        try client.send("\n\r\n   \n{\"id\":1,\"method\":\"session.whoami\"}\r\n")
        #expect(try client.readLine()["id"] == 1)
    }

    @Test func threeHundredPipelinedRequestsAreAllAnswered() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        var batch = ""
        for id in 1...300 { batch += "{\"id\":\(id),\"method\":\"session.whoami\"}\n" }
        try client.send(batch)
        var seen = Set<Int64>()
        for _ in 1...300 {
            let answer = try client.readLine()
            #expect(answer["result"] == ["user": nil])
            if let id = answer["id"]?.int64Value { seen.insert(id) }
        }
        #expect(seen == Set(1...300))
    }

    @Test func aOneMebibyteLineIsRefusedAndTheNextRequestIsServed() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        try client.send([UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20))
        let refusal = try client.readLine()
        #expect(refusal["id"] == .null)
        #expect(refusal["error"]?["code"] == -32600)
        #expect(refusal["error"]?["data"]?["reason"] == "request_too_large")
        #expect(refusal["error"]?["data"]?["limit"] == 65536)
        try client.send("\n{\"id\":2,\"method\":\"session.whoami\"}\n")
        #expect(try client.readLine()["id"] == 2)
    }

    @Test func aLineExactlyAtTheLimitIsServed() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        let prefix = "{\"id\":1,\"method\":\"session.hello\",\"params\":{\"client\":\""
        let suffix = "\"}}"
        let line = prefix + String(repeating: "c", count: 65_536 - prefix.utf8.count - suffix.utf8.count) + suffix
        #expect(line.utf8.count == 65_536)
        try client.send(line + "\n")
        #expect(try client.readLine()["id"] == 1)
        try client.send(prefix + String(repeating: "c", count: 65_537 - prefix.utf8.count - suffix.utf8.count) + suffix + "\n")
        #expect(try client.readLine()["error"]?["data"]?["reason"] == "request_too_large")
    }

    @Test func aHalfClosedClientStillGetsEveryAnswer() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        try client.send("{\"id\":1,\"method\":\"session.hello\"}\n{\"id\":2,\"method\":\"session.whoami\"}\n{\"id\":3,\"method\":\"rpc.describe\"}")
        client.shutdownWrite()
        #expect(try client.readLine()["id"] == 1)
        #expect(try client.readLine()["id"] == 2)
        #expect(try client.readLine()["id"] == 3)
        #expect(try client.readsEndOfStream())
    }

    @Test func aThousandConcurrentConnectionsAreEachAnswered() throws {
        let daemon = try TestDaemon()
        raiseOwnDescriptorLimit()
        var clients: [TestClient] = []
        for _ in 0..<1_000 { clients.append(try daemon.connect()) }
        for (index, client) in clients.enumerated() {
            try client.send("{\"id\":\(index),\"method\":\"session.whoami\"}\n")
        }
        for (index, client) in clients.enumerated() {
            #expect(try client.readLine()["id"]?.int64Value == Int64(index))
        }
        let stats = try clients[0].call("admin.stats")
        #expect(stats["result"]?["connections"] == 1_000)
    }

    @Test func describeListsEveryMethodWithShapes() throws {
        let daemon = try TestDaemon()
        let answer = try daemon.connect().call("rpc.describe")
        let methods = answer["result"]?["methods"]?.arrayValue ?? []
        let names = methods.compactMap { $0["name"]?.stringValue }
        for name in ["session.hello", "session.whoami", "session.logout", "rpc.describe", "admin.stats"] {
            #expect(names.contains(name), "\(name) missing")
        }
        let hello = methods.first { $0["name"] == "session.hello" }
        #expect(hello?["params"]?["locale?"] == "string")
        #expect(hello?["result"]?["protocol"] != nil)
    }

    @Test func logoutAnswersAndSendsASessionEvent() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        let answer = try client.call("session.logout")
        #expect(answer["result"] == [:])
        #expect(client.events.map { $0["params"] } == [["type": "session", "user": nil]])
    }

    @Test func adminStatsCountsConnectionsAndRequests() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        _ = try client.call("session.hello")
        let stats = try client.call("admin.stats")["result"]
        #expect(stats?["connections"] == 1)
        #expect(stats?["sessions"] == 1)
        #expect(stats?["requests"] == 1)
        #expect((stats?["uptime_ms"]?.int64Value ?? -1) >= 0)
    }
}

func raiseOwnDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
