import RosterCore
import RosterRuntime

/// How a `PGPool` connects and how much it lets wait.
public struct PGPoolSettings: Sendable {
    public var conninfo: String
    /// `[PostgreSQL] Connections=`, default 4.
    public var connections: Int
    /// `SET statement_timeout` on every connection, so that no statement runs for ever.
    public var statementTimeoutMs: Int
    /// A `SELECT 1` on a connection idle this long, to find a dead one before a caller does.
    public var heartbeatMs: Int
    public var connectTimeoutMs: Int
    public var reconnectMinMs: Int
    public var reconnectMaxMs: Int
    /// Requests waiting or in flight in total; one payer or one client connection may hold half.
    public var queueLimit: Int
    /// Requests in flight on one connection at once (1: no pipelining, each waits for the one before).
    public var pipelineDepth: Int

    public init(conninfo: String, connections: Int = 4) {
        self.conninfo = conninfo
        self.connections = max(1, connections)
        statementTimeoutMs = 5_000
        heartbeatMs = 5_000
        connectTimeoutMs = 5_000
        reconnectMinMs = 100
        reconnectMaxMs = 5_000
        queueLimit = 4_096
        pipelineDepth = 16
    }

    /// The budget of the pool's `FairQueue`.
    var budget: QueueBudget {
        let half = max(1, queueLimit / 2)
        return QueueBudget(jobs: queueLimit, jobsPerPayer: half, jobsPerConnection: half, bytes: .max, bytesPerPayer: .max)
    }

    /// How long past statement_timeout a request may go unanswered: the server's own cancel normally comes
    /// first, and an answer missing even then means the server has stopped (frozen, or its host gone).
    var deadlineMarginMs: Int { min(2_000, max(500, statementTimeoutMs)) }

    /// A request's client-side deadline: a margin past statement_timeout, so that the server's cancel comes first.
    var timing: PGConnectionStateMachine.Timing {
        PGConnectionStateMachine.Timing(connectTimeout: .milliseconds(connectTimeoutMs),
                                        requestTimeout: .milliseconds(statementTimeoutMs + deadlineMarginMs),
                                        heartbeat: .milliseconds(heartbeatMs),
                                        reconnectMin: .milliseconds(reconnectMinMs),
                                        reconnectMax: .milliseconds(max(reconnectMinMs, reconnectMaxMs)))
    }

    /// What runs after every connect before the connection serves. `synchronous_commit` is set, not assumed:
    /// a server configured with it off would answer a commit before it is on disk, and an answer that says done
    /// must mean committed (protocol.md §Contacts: a write is answered only once it is on disk).
    var setup: [PGStatement] {
        [PGStatement("SET statement_timeout = \(max(0, statementTimeoutMs))"), PGStatement("SET synchronous_commit = on")]
    }

    /// The pool's connections also end a transaction left idle (a lease whose holder never came back): the
    /// server closes that session, and the connection reconnects.
    var poolSetup: [PGStatement] {
        setup + [PGStatement("SET idle_in_transaction_session_timeout = \(max(10_000, statementTimeoutMs * 4))")]
    }
}
