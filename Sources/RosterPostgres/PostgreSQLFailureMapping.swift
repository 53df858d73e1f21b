import RosterRuntime
import RosterStorage

extension PGFailure {
    /// What a pool's failure is in the storage boundary's terms; the server's words go to the log here, once,
    /// with the SQLSTATE, and never a stored value (a message names constraints, never the row; DETAIL, which
    /// shows the row, is not kept by the pool).
    func storageFailure(logging logger: Logger, _ operation: String) -> StorageFailure {
        switch self {
        case .unavailable(let retryAfterMs):
            return .unavailable(retryAfterMs: retryAfterMs)
        case .busy(let retryAfterMs):
            return .busy(retryAfterMs: retryAfterMs)
        case .timeout:
            // statement_timeout, or no answer in time: the server is too slow to serve now; come back later.
            logger.warning("\(operation): no answer from PostgreSQL within the statement timeout")
            return .unavailable(retryAfterMs: PostgreSQLStorage.retryAfterMs)
        case .server(let sqlState, let message):
            // Class 53, insufficient resources: 53100 disk_full, 53200 out_of_memory, 53400 configuration_limit_exceeded
            // are a full store; 53300 too_many_connections is an outage that passes.
            if sqlState == "53300" {
                logger.warning("\(operation): PostgreSQL has no connection slot free (SQLSTATE 53300)")
                return .unavailable(retryAfterMs: PostgreSQLStorage.retryAfterMs)
            }
            if sqlState.hasPrefix("53") {
                logger.error("\(operation): PostgreSQL is out of resources (SQLSTATE \(sqlState)): \(message)")
                return .full
            }
            logger.error("\(operation) failed (SQLSTATE \(sqlState)): \(message)")
            return .other
        }
    }
}
