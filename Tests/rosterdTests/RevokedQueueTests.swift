import Foundation
import Glibc
import RosterProtocol
import Testing

/// Work a session queued before it was revoked, against the real daemon on SQLite: a revocation made on another
/// connection (`session.revoke_others`, a password change) stops every contacts write of the revoked session
/// still queued. Each of its later answers is `unauthenticated`, and the book holds exactly what was answered as
/// written.
@Suite("Queued writes of a revoked session", .serialized)
struct RevokedQueueTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n[Login]\nRateLimitBurst=100000\n"

    /// As many writes as one connection may have queued (`MaxQueuedJobsPerConnection=` is 32).
    private static let queued = 30

    private func loggedIn(_ daemon: TestDaemon, _ username: String, password: String = "secret1") throws -> TestClient {
        let connection = try daemon.connect()
        let answer = try connection.call("auth.login", ["username": .string(username), "password": .string(password)])
        #expect(answer["result"]?["username"] == .string(username), "\(answer)")
        _ = try connection.waitForEvent { $0["type"] == "session" }
        return connection
    }

    private func register(_ daemon: TestDaemon, _ username: String) throws {
        let answer = try daemon.connect().call("users.register", ["username": .string(username), "password": "secret1"])
        #expect(answer["result"]?["username"] == .string(username), "\(answer)")
    }

    /// A CSV of `rows` contacts no other batch holds.
    private static func batch(_ number: Int, rows: Int) -> String {
        "name,phone\r\n" + (0..<rows).map { "Batch \(number) Person \($0),\(100_000 + $0)\r\n" }.joined()
    }

    /// What the connection heard for the `count` requests it pipelined (ids 1…count), in order of arrival,
    /// and where among them its `session` event with `user: null` came.
    private struct Heard {
        var answers: [(id: Int64, answer: JSONValue)] = []
        var loggedOutAfter: Int?

        /// Answers that say something was written, after the session heard it was logged out. At most one: one
        /// user's writes run one at a time, and the write whose transaction committed just before the revocation's
        /// did (its token still stored) may have its answer reach the loop after the revocation's, so after the event.
        /// Every write that started later finds the session ended and writes nothing.
        var writtenAfterLogOut: Int {
            guard let at = loggedOutAfter else { return 0 }
            return answers[at...].filter { $0.answer["result"] != nil }.count
        }

        var reasons: [String] { answers.compactMap { $0.answer["error"]?["data"]?["reason"]?.stringValue } }
    }

    private func hear(_ connection: TestClient, count: Int) throws -> Heard {
        var heard = Heard()
        while heard.answers.count < count {
            let message = try connection.readLine()
            if message["method"] == "event" {
                if message["params"]?["type"] == "session", message["params"]?["user"] == .null {
                    heard.loggedOutAfter = heard.answers.count
                }
                continue
            }
            guard let id = message["id"]?.int64Value else { continue }
            heard.answers.append((id, message))
        }
        return heard
    }

    private func send(_ connection: TestClient, id: Int, _ method: String, _ params: JSONValue) throws {
        try connection.send(JSONWriter.encode(["id": .int(Int64(id)), "method": .string(method), "params": params]) + [0x0A])
    }

    /// The user's book as a fresh log-in sees it.
    private func storedTotal(_ daemon: TestDaemon, _ username: String, password: String) throws -> Int64? {
        let reader = try loggedIn(daemon, username, password: password)
        return try reader.call("contacts.list", ["limit": 1])["result"]?["total"]?.int64Value
    }

    @Test func importsQueuedBeforeRevokeOthersAnswerUnauthenticatedAndWriteNothing() throws {
        let daemon = try TestDaemon(config: Self.config)
        try register(daemon, "thief1")
        let thief = try loggedIn(daemon, "thief1")
        let owner = try loggedIn(daemon, "thief1")
        // The shape: 560 contacts an import, as many imports as may wait.
        for number in 1...Self.queued {
            try send(thief, id: number, "contacts.import", ["format": "csv", "data": .string(Self.batch(number, rows: 560))])
        }
        // The first import has started, so the rest are queued behind it when the owner revokes.
        let revoked = try owner.call("session.revoke_others")
        #expect(revoked["result"] == ["revoked": 1], "\(revoked)")
        let heard = try hear(thief, count: Self.queued)
        let added = heard.answers.compactMap { $0.answer["result"]?["added"]?.int64Value }.reduce(0, +)

        #expect(heard.loggedOutAfter != nil, "the thief's connection heard session user: null")
        #expect(heard.writtenAfterLogOut <= 1, "imports answered as written after the log-out: \(heard.writtenAfterLogOut)")
        let firstRefused = heard.answers.firstIndex { $0.answer["error"]?["data"]?["reason"] == "unauthenticated" }
        #expect(firstRefused != nil, "the revocation came while imports were queued")
        if let firstRefused {
            #expect(heard.answers[firstRefused...].allSatisfy { $0.answer["error"]?["data"]?["reason"] == "unauthenticated" },
                    "every answer after the first refusal is unauthenticated: \(heard.reasons)")
        }
        #expect(Set(heard.reasons).isSubset(of: ["unauthenticated"]), "\(heard.reasons)")
        #expect(try storedTotal(daemon, "thief1", password: "secret1") == added,
                "the book holds exactly what was answered as written (\(added))")
    }

    @Test func addsQueuedBeforeAPasswordChangeOnAnotherConnectionWriteNothing() throws {
        let daemon = try TestDaemon(config: Self.config)
        try register(daemon, "alice1")
        let stale = try loggedIn(daemon, "alice1")
        let owner = try loggedIn(daemon, "alice1")
        // Small imports of one contact and adds, alternating: each is one queued write.
        for number in 1...Self.queued {
            if number.isMultiple(of: 2) {
                try send(stale, id: number, "contacts.add", ["name": .string("Added \(number)")])
            } else {
                try send(stale, id: number, "contacts.import", ["format": "csv", "data": .string(Self.batch(number, rows: 300))])
            }
        }
        let changed = try owner.call("account.change_password", ["current": "secret1", "new": "better22"])
        #expect(changed["result"] == ["revoked": 1], "\(changed)")
        let heard = try hear(stale, count: Self.queued)
        let written = heard.answers.map { answer -> Int64 in
            if let added = answer.answer["result"]?["added"]?.int64Value { return added }
            return answer.answer["result"]?["contact"] != nil ? 1 : 0
        }.reduce(0, +)

        #expect(heard.loggedOutAfter != nil)
        #expect(heard.writtenAfterLogOut <= 1, "writes answered as written after the log-out: \(heard.writtenAfterLogOut)")
        #expect(Set(heard.reasons).isSubset(of: ["unauthenticated"]), "\(heard.reasons)")
        #expect(heard.reasons.count > 0, "the password change came while writes were queued")
        #expect(try storedTotal(daemon, "alice1", password: "better22") == written,
                "the book holds exactly what was answered as written (\(written))")
    }
}
