import Foundation
import CSQLite

/// A failure of the store. Descriptions name the operation and the SQLite code only, never a bound
/// value, because bound values are personal data (names, e-mail addresses, hashes).
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// SQLite reported `code` (primary), `extendedCode`, and the OS `errno` of its last I/O failure (0 if none).
    case sqlite(code: Int32, extendedCode: Int32, systemErrno: Int32, operation: String)
    /// The connection was already closed when `operation` was attempted.
    case closed(operation: String)
    /// The database would not switch to WAL; Roster's durability promise depends on it.
    case walUnavailable
    /// The database has a migration applied that this build does not know: history was rewritten
    /// or the file belongs to a newer Roster.
    case unknownAppliedMigration(name: String)
    /// A migration was inserted before one that is already applied; the list must be append-only.
    case migrationOrderChanged(name: String)
    /// The same migration name appears twice in the list.
    case duplicateMigration(name: String)
    /// A text or blob longer than SQLite can bind.
    case valueTooLarge(operation: String)
    /// The database file was checked at open and is not one Roster will serve.
    case refused(DatabaseRefusal)
    /// A stored value this build cannot read (an audit event it does not know): the file was changed by hand.
    case unreadableValue(operation: String)

    // Extended result codes are macros the Swift importer cannot read, so they are rebuilt here
    // from sqlite3.h's definitions.
    static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

    /// The primary SQLite result code, if this came from SQLite.
    public var code: Int32? {
        if case let .sqlite(code, _, _, _) = self { return code }
        return nil
    }

    /// The extended SQLite result code, if this came from SQLite.
    public var extendedCode: Int32? {
        if case let .sqlite(_, extended, _, _) = self { return extended }
        return nil
    }

    /// The disk (or quota) is full: SQLITE_FULL, or an I/O error whose errno was ENOSPC or EDQUOT
    /// (SQLite reports a failed fsync or shm grow as SQLITE_IOERR_* even when the cause is space).
    public var isFull: Bool {
        guard case let .sqlite(code, _, systemErrno, _) = self else { return false }
        if code == SQLITE_FULL { return true }
        // EFBIG is a file-size limit (RLIMIT_FSIZE, a quota on one file): to the writer, the disk is full.
        return code == SQLITE_IOERR && (systemErrno == ENOSPC || systemErrno == EDQUOT || systemErrno == EFBIG)
    }

    /// A UNIQUE or PRIMARY KEY constraint rejected the write.
    public var isConstraintUnique: Bool {
        guard case let .sqlite(_, extended, _, _) = self else { return false }
        return extended == Self.constraintUnique || extended == Self.constraintPrimaryKey
    }

    /// Another connection held a lock longer than the busy timeout.
    public var isBusy: Bool {
        guard case let .sqlite(code, _, _, _) = self else { return false }
        return code == SQLITE_BUSY || code == SQLITE_LOCKED
    }

    /// The same failure attributed to a more specific operation, for callers that wrap a low-level step.
    func relabelled(_ operation: String) -> StoreError {
        switch self {
        case let .sqlite(code, extended, errno, _):
            return .sqlite(code: code, extendedCode: extended, systemErrno: errno, operation: operation)
        case .closed:
            return .closed(operation: operation)
        case .valueTooLarge:
            return .valueTooLarge(operation: operation)
        case .unreadableValue:
            return .unreadableValue(operation: operation)
        case .walUnavailable, .unknownAppliedMigration, .migrationOrderChanged, .duplicateMigration, .refused:
            return self
        }
    }

    /// SQLite's fixed English text for the code, or the description for a failure that is not SQLite's.
    /// sqlite3_errstr is used, not sqlite3_errmsg, whose text depends on the statement and may hold values.
    var sqliteText: String {
        guard case let .sqlite(_, extended, _, _) = self else { return description }
        return sqlite3_errstr(extended).map { String(cString: $0) } ?? "unknown error"
    }

    public var description: String {
        switch self {
        case let .sqlite(code, extended, errno, operation):
            let os = errno == 0 ? "" : ", errno \(errno)"
            return "store: \(operation) failed: \(sqliteText) (SQLite \(code)/\(extended)\(os))"
        case let .closed(operation):
            return "store: \(operation) on a closed database"
        case .walUnavailable:
            return "store: the database refused WAL journal mode"
        case let .unknownAppliedMigration(name):
            return "store: the database has migration \(name) applied, which this build does not know"
        case let .migrationOrderChanged(name):
            return "store: migration \(name) was inserted before an applied migration"
        case let .duplicateMigration(name):
            return "store: migration \(name) is listed twice"
        case let .valueTooLarge(operation):
            return "store: \(operation) failed: value too large to bind"
        case let .refused(refusal):
            return "store: \(refusal)"
        case let .unreadableValue(operation):
            return "store: \(operation) failed: a stored value this build cannot read"
        }
    }
}
