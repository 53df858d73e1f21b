import Glibc
import RosterPostgresTesting
import RosterProtocol

/// rosterd on PostgreSQL for tests: a config naming one database, and daemons sharing it, each on a socket (and in
/// a directory) of its own, as two hosts would be.
final class SharedDatabase {
    let cluster: PostgresTestCluster
    /// The database every daemon of this value serves.
    let conninfo: String
    private let extra: String
    /// Where the daemons' one key file is: every daemon of a database needs the same, or it is refused.
    private let keys: TemporaryDirectory
    var keyFile: String { keys.path + "/roster.key" }

    /// A fresh database on `cluster` (the process's shared one unless a test stops its own).
    init(cluster: PostgresTestCluster? = nil, extra: String = "") throws {
        self.cluster = try cluster ?? PostgresTestCluster.shared
        conninfo = try self.cluster.createDatabase()
        self.extra = extra
        keys = try TemporaryDirectory()
    }

    /// The config of a daemon on `conninfo`: cheap Argon2id (the tests are not about its cost), then `extra`.
    static func config(conninfo: String, extra: String = "") -> String {
        "[Storage]\nBackend=postgresql\n[PostgreSQL]\nConnection=\(conninfo)\n[Hashing]\nMemoryKiB=8192\nIterations=1\n"
            + extra
    }

    /// One more daemon on this database, with the key file the others have, listening once it has connected and
    /// migrated.
    func daemon() throws -> TestDaemon {
        try TestDaemon(config: Self.config(conninfo: conninfo, extra: "[Secrets]\nKeyFile=\(keyFile)\n" + extra))
    }

    /// Two daemons on this database: A and B.
    func pair() throws -> (a: TestDaemon, b: TestDaemon) {
        (try daemon(), try daemon())
    }
}

extension TestClient {
    /// `session.hello` in English with debounce 0, so a field's check starts at its input.
    func helloWithoutDebounce() throws {
        _ = try call("session.hello", ["locale": "en", "timing": ["debounce_ms": 0]])
    }

    /// Logs this connection in; throws unless the answer is a result.
    @discardableResult
    func logIn(_ username: String, password: String = "secret1") throws -> String {
        let answer = try call("auth.login", ["username": .string(username), "password": .string(password)])
        guard let token = answer["result"]?["token"]?.stringValue else {
            throw HarnessError(description: "log-in of \(username) failed: \(answer)")
        }
        return token
    }

    /// Registers `username`; throws unless the answer is a result.
    func register(_ username: String, password: String = "secret1") throws {
        let answer = try call("users.register", ["username": .string(username), "password": .string(password)])
        guard answer["result"]?["username"] == .string(username) else {
            throw HarnessError(description: "registration of \(username) failed: \(answer)")
        }
    }
}

/// The answer's `data.reason`, or nil for a result.
func failureReason(_ answer: JSONValue) -> String? {
    answer["error"]?["data"]?["reason"]?.stringValue
}
