import Glibc
import RosterProtocol
import Testing

/// A targeted brute force against the real daemon leaves audit entries that name its victim: one uid spends its
/// minute's cap of failed entries on made-up names, then tries ten wrong passwords on a real account; the first is
/// written at once and names the account, and the other nine come as one entry naming it with their count once the
/// minute ends (housekeeping sums it up within 10 s after), which `rosterctl audit` shows.
@Suite("Failed log-ins on a real account in the audit log, against the real daemon")
struct FailedLoginAuditTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n"

    private func reason(_ answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    private func entries(_ client: TestClient, username: String? = nil) throws -> [JSONValue] {
        var params: [(String, JSONValue)] = [("event", "login"), ("limit", 1_000)]
        if let username { params.append(("username", .string(username))) }
        return try client.call("admin.audit", .object(params))["result"]?["items"]?.arrayValue ?? []
    }

    @Test func tenWrongPasswordsOnARealAccountAfterACapOfMadeUpNamesAreNamedWithTheirCount() throws {
        let daemon = try TestDaemon(config: Self.config)
        let admin = try daemon.connect()
        _ = try admin.call("users.register", ["username": "alice1", "password": "secret1"])
        let guesser = try daemon.connect()
        for index in 0..<12 {
            let answer = try guesser.call("auth.login", ["username": .string("madeup\(index)"), "password": "wrong12"])
            #expect(reason(answer) == "not_found", "\(answer)")
        }
        for _ in 0..<10 {
            let answer = try guesser.call("auth.login", ["username": "alice1", "password": "wrong12"])
            #expect(reason(answer) == "wrong_password", "\(answer)")
        }
        // The cap of ten went to made-up names; alice1's first failure is written at once all the same.
        let named = try entries(admin, username: "alice1")
        #expect(named.count == 1, "\(named)")
        #expect(named.first?["reason"] == "wrong_password" && named.first?["outcome"] == "failed", "\(named)")
        #expect(named.first?["suppressed"] == 0, "\(named)")
        #expect(try entries(admin).count(where: { $0["username"] == .null }) == 10)

        // The other nine: one entry naming alice1, with their count, once the minute is over.
        var folded: [JSONValue] = []
        #expect(try eventually(timeoutMs: 90_000) {
            folded = try entries(admin, username: "alice1").filter { $0["reason"] == "suppressed" }
            return !folded.isEmpty
        })
        #expect(folded.count == 1 && folded.first?["suppressed"] == 9, "\(folded)")
        #expect(folded.first?["peer_uid"] == .int(Int64(getuid())), "\(folded)")
        let shown = try Rosterctl(daemon).run(["--no-legend", "audit", "--user", "alice1", "--event", "login"])
        #expect(shown.status == 0, "\(shown.stderr)")
        // TIME EVENT USER OUTCOME REASON PEER CLIENT, newest first; the words after the time.
        let rows = shown.stdout.split(separator: "\n").map { $0.split(separator: " ").dropFirst().joined(separator: " ") }
        #expect(rows == ["login alice1 failed suppressed (+9 suppressed) 0/\(getpid()) -",
                         "login (password) alice1 failed wrong_password 0/\(getpid()) -"], "\(shown.stdout)")
        // And the made-up names' two left out: a nameless summary, as before.
        #expect(try eventually { try entries(admin).contains { $0["username"] == .null && $0["suppressed"] == 2 } })
    }
}
