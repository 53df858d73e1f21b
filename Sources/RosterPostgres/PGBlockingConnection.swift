import CLibPQ

/// Blocking libpq (PQconnectdb / PQexecParams): only before the loop serves (migrations at start), offline
/// tools (--copy-database) and a backup's own thread (`admin.backup`). Never on a serving loop.
public final class PGBlockingConnection {
    private var connection: OpaquePointer?

    /// Connects at once, waiting at most the conninfo's `connect_timeout` (10 s where it names none). A server
    /// that cannot be reached is `.server(sqlState: "08006", message:)` with libpq's message (which never holds
    /// the password).
    public init(conninfo: String) throws(PGFailure) {
        // Keywords before the expanded conninfo are defaults it overrides; the one after only fills a gap.
        let connection = LibPQ.withCStrings(["connect_timeout", "dbname", "fallback_application_name"]) { keywords in
            LibPQ.withCStrings(["10", conninfo, "rosterd"]) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else { throw .unavailable(retryAfterMs: 1_000) }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = LibPQ.errorMessage(connection)
            PQfinish(connection)
            throw .server(sqlState: "08006", message: message)
        }
        LibPQ.silenceNotices(connection)
        self.connection = connection
    }

    deinit { close() }

    /// Runs one statement with its parameters and answers its rows; a failure throws the server's error.
    @discardableResult
    public func execute(_ sql: String, _ params: [PGValue] = []) throws(PGFailure) -> PGResult {
        guard let connection else { throw .unavailable(retryAfterMs: 0) }
        let result = LibPQ.withParameters(params) { count, types, values, lengths, formats in
            PQexecParams(connection, sql, count, types, values, lengths, formats, 0)
        }
        guard let result else { throw .unavailable(retryAfterMs: 1_000) }
        switch LibPQ.outcome(of: result) {
        case .done(let answer): return answer
        case .failed(let failure):
            if case .unavailable = failure, PQstatus(connection) == CONNECTION_BAD { throw .unavailable(retryAfterMs: 1_000) }
            throw failure
        case .aborted, .sync: throw .unavailable(retryAfterMs: 0)
        }
    }

    /// Closes the connection; later calls answer `.unavailable`.
    public func close() {
        if let connection { PQfinish(connection) }
        connection = nil
    }
}
