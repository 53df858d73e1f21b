import Glibc
import RosterCore
import RosterPostgres
import RosterRuntime
import RosterStorage
import RosterSQLite

// The composition root: the one file of the daemon that names a storage backend. RosterServer only ever sees
// the storage protocols.

/// What rosterd does with the storage: open the one the configuration names for the server, and the offline
/// `--backup` and `--copy-database`.
enum DaemonStorage {
    /// The processors online, which the storage's workers and the password lanes are sized by.
    static var cores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Opens the storage the configuration names (`[Storage] Backend=`). SQLite: the file at `databasePath`,
    /// checked, locked against a second daemon and migrated; `clock` is the wall clock its stored times are read
    /// from. PostgreSQL: `[PostgreSQL] Connection=`, migrated under an advisory lock, its times from the
    /// database's own clock. With `keyCheck` (the daemon always gives it), either database must have been first
    /// served with that key, or it is refused.
    static func open(loop: EventLoop, config: DaemonConfig, databasePath: String, cores: Int, logger: Logger,
                     keyCheck: KeyCheck?, clock: any WallClock) throws(StorageOpenFailure) -> any Storage {
        switch config.storage.backend {
        case .sqlite:
            do throws(SQLiteStorageOpenFailure) {
                return try SQLiteStorage.open(path: databasePath, loop: loop, settings: config.server, cores: cores,
                                              clock: clock, logger: logger, keyCheck: keyCheck)
            } catch {
                throw .sqlite(error)
            }
        case .postgresql:
            let timeout = config.storage.postgresqlStatementTimeout
            let settings = PostgreSQLSettings(conninfo: config.storage.postgresqlConnection,
                                              connections: config.storage.postgresqlConnections,
                                              statementTimeoutMs: Int(timeout.nanoseconds / 1_000_000))
            do throws(PostgreSQLOpenFailure) {
                return try PostgreSQLStorage.open(settings: settings, loop: loop, server: config.server, cores: cores,
                                                  clock: nil, logger: logger, keyCheck: keyCheck,
                                                  snapshots: SQLiteSnapshotWriter())
            } catch {
                throw .postgresql(error)
            }
        }
    }

    /// The database as the daemon would find it, copied and checked. It only reads, through the database's own
    /// locking, so it is as safe beside a running daemon as `admin.backup`.
    static func backup(at path: String, to target: String) throws(OfflineBackupError) -> BackupSummary {
        do {
            return try Database.backupSource(path: path).backup(to: target)
        } catch let error as BackupError {
            if case .refused(let refusal) = error { throw .refused(refusal) }
            throw .failed("\(error)")
        } catch {
            throw .failed("\(error)")
        }
    }

    /// The database `endpoint` names, opened to be read whole by `rosterd --copy-database`.
    static func copySource(_ endpoint: DatabaseEndpoint) throws(CopyError) -> any CopySource {
        switch endpoint {
        case .sqlite(let path): return try SQLiteCopy.source(path: path)
        case .postgresql(let conninfo): return try PostgreSQLCopy(conninfo: conninfo)
        }
    }

    /// The database `endpoint` names, opened (created and migrated where it is new) to be written by a copy.
    static func copyTarget(_ endpoint: DatabaseEndpoint) throws(CopyError) -> any CopyTarget {
        switch endpoint {
        case .sqlite(let path):
            // As the daemon does for its database, so that a copy can be the first thing a new host runs.
            do throws(SystemError) {
                try DaemonPaths.createParentDirectories(of: path, mode: 0o700)
            } catch {
                throw .failed("\(path): \(error)")
            }
            return try SQLiteCopy.target(path: path, now: SystemWallClock().nowMs())
        case .postgresql(let conninfo): return try PostgreSQLCopy(conninfo: conninfo)
        }
    }
}

/// Why the configured storage could not be opened; the description is the backend's own (a connection string
/// in it is masked).
public enum StorageOpenFailure: Error, CustomStringConvertible {
    case sqlite(SQLiteStorageOpenFailure)
    case postgresql(PostgreSQLOpenFailure)

    public var description: String {
        switch self {
        case .sqlite(let failure): failure.description
        case .postgresql(let failure): failure.description
        }
    }
}

extension Error {
    /// Whether this is a database refusing the key file (`key_mismatch`), of either backend.
    var isKeyMismatch: Bool {
        guard let failure = self as? StorageOpenFailure else { return false }
        switch failure {
        case .sqlite(let refusal):
            if case .keyMismatch = refusal { return true }
            return false
        case .postgresql(let refusal):
            if case .keyMismatch = refusal { return true }
            return false
        }
    }
}

/// Why `rosterd --backup` made no copy.
enum OfflineBackupError: Error, CustomStringConvertible {
    /// The target was refused; nothing was written.
    case refused(BackupRefusal)
    /// The copy failed; the backend's own words.
    case failed(String)

    var description: String {
        switch self {
        case .refused(let refusal): "backup refused: \(refusal.rawValue)"
        case .failed(let why): why
        }
    }
}
