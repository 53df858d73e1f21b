import Glibc

/// Why a database file is not served. Each is found at start, before a client could be told "listening".
public struct DatabaseRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong; the raw value is stable (tests and scripts may match it).
    public enum Reason: String, Sendable, CaseIterable {
        /// The file is not SQLite at all, or its header is damaged.
        case notADatabase = "not_a_database"
        /// `PRAGMA application_id` names another application.
        case foreignApplication = "foreign_application"
        /// No application id, and a schema that Roster's migrations did not make.
        case unrecognisedSchema = "unrecognised_schema"
        /// `PRAGMA quick_check` found damage.
        case corrupt
        /// The file, its directory or its file system refuses writes.
        case notWritable = "not_writable"
    }

    public let reason: Reason
    /// The database file as the daemon was told it.
    public let path: String
    /// What was found, for the operator (SQLite's words, an id, an errno text); never a stored value.
    public let detail: String

    public init(_ reason: Reason, path: String, detail: String = "") {
        self.reason = reason
        self.path = path
        self.detail = detail
    }

    public var description: String {
        let untouched = "; it was left untouched"
        switch reason {
        case .notADatabase:
            return "\(path) is not an SQLite database, or its header is damaged (\(detail))\(untouched)"
        case .foreignApplication:
            return "\(path) belongs to another application (application_id \(detail); Roster's is "
                + "\(RosterSchema.applicationIDText))\(untouched)"
        case .unrecognisedSchema:
            return "\(path) holds tables that Roster did not make (\(detail)); it looks like another application's "
                + "database\(untouched)"
        case .corrupt:
            return "\(path) failed PRAGMA quick_check (\(detail)): stop using it and restore the latest backup "
                + "(rosterd(8), BACKUP)"
        case .notWritable:
            return "\(path) cannot be written: \(detail)"
        }
    }
}
