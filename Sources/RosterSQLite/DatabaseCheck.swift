import CSQLite
import Glibc

/// The checks a database file passes before Roster writes to it: that it can be written, that it is Roster's
/// (or empty), and that it is not damaged. Each failure is a `DatabaseRefusal`; none modifies the file.
enum DatabaseCheck {
    /// The directory (WAL creates `-wal` and `-shm` there at every open), the file and its sidecars accept
    /// writes: SQLite would otherwise open read-only without a word, and every write would fail later.
    static func requireWritable(_ path: String) throws(StoreError) {
        let files = DatabaseFiles(path: path)
        func refuse(_ detail: String) -> StoreError { .refused(DatabaseRefusal(.notWritable, path: path, detail: detail)) }
        if faccessat(AT_FDCWD, files.directory, W_OK, AT_EACCESS) != 0 {
            throw refuse("its directory \(files.directory) is not writable (\(String(cString: strerror(errno)))), and "
                         + "SQLite must create \(files.name)-wal and \(files.name)-shm there")
        }
        for name in [files.name, files.name + "-wal", files.name + "-shm"] {
            let file = files.directory + "/" + name
            guard access(file, F_OK) == 0 else { continue }
            if faccessat(AT_FDCWD, file, W_OK, AT_EACCESS) != 0 {
                throw refuse("\(file) is not writable (\(String(cString: strerror(errno))))")
            }
        }
    }

    /// What a file holds, judged without writing a byte to it.
    enum Identity: Equatable {
        /// No schema at all: a new file, to be made Roster's.
        case empty
        /// Roster's application id.
        case roster
        /// No application id, but exactly the schema Roster's own migrations make: a database of a Roster from
        /// before the id was set, to be adopted.
        case rosterWithoutID
    }

    /// Reads the application id and schema of the file at `path` on a read-only connection; refuses another
    /// application's file, or a file that is not a database, before anything could touch it.
    static func identity(ofFileAt path: String, migrations: [Migrator.Migration]) throws(StoreError) -> Identity {
        var info = stat()
        guard stat(path, &info) == 0, info.st_size > 0 else { return .empty }
        let database = try inspect(path)
        defer { database.close() }
        do throws(StoreError) {
            let id = Int32(truncatingIfNeeded: Int64(try database.pragmaValue("PRAGMA application_id") ?? "0") ?? 0)
            let objects = try schema(of: database)
            if id == RosterSchema.applicationID { return .roster }
            if id != 0 {
                throw StoreError.refused(DatabaseRefusal(.foreignApplication, path: path, detail: RosterSchema.hex(id)))
            }
            if objects.isEmpty { return .empty }
            guard objects.contains(where: { $0.type == "table" && $0.name == "schema_migrations" }) else {
                throw unrecognised(path, objects)
            }
            let applied = try Migrator.appliedNames(database)
            guard applied.count <= migrations.count, Array(migrations.prefix(applied.count).map(\.name)) == applied,
                  try objects == expectedSchema(after: Array(migrations.prefix(applied.count))) else {
                throw unrecognised(path, objects)
            }
            return .rosterWithoutID
        } catch {
            throw refusal(for: error, path: path)
        }
    }

    /// `PRAGMA quick_check` on the open database: pages, b-trees, record formats, NOT NULL and CHECK constraints
    /// (not index contents, which `integrity_check` adds at several times the cost).
    static func requireIntact(_ database: Database, path: String) throws(StoreError) {
        var problems: [String] = []
        do throws(StoreError) {
            let statement = try database.prepare("PRAGMA quick_check(3)")
            while try statement.step() {
                // A row may hold several lines, the first naming the schema ("*** in database main ***").
                for line in (statement.string(at: 0) ?? "").split(separator: "\n") where !line.hasPrefix("***") {
                    problems.append(String(line))
                }
            }
        } catch {
            throw refusal(for: error, path: path)
        }
        guard problems == ["ok"] else {
            throw .refused(DatabaseRefusal(.corrupt, path: path, detail: String(problems.joined(separator: "; ").prefix(300))))
        }
    }

    /// The light check after a clean shutdown (see `CleanShutdown`): the file is as many whole pages as its
    /// header says, so it was neither cut short nor written past its end since.
    static func requireWholePages(_ database: Database, path: String) throws(StoreError) {
        var info = stat()
        let pages: Int64
        let pageSize: Int64
        do throws(StoreError) {
            pages = Int64(try database.pragmaValue("PRAGMA page_count") ?? "") ?? -1
            pageSize = Int64(try database.pragmaValue("PRAGMA page_size") ?? "") ?? -1
        } catch {
            throw refusal(for: error, path: path)
        }
        guard stat(path, &info) == 0, pages >= 0, pageSize > 0, Int64(info.st_size) == pages * pageSize else {
            throw .refused(DatabaseRefusal(.corrupt, path: path,
                                           detail: "the file is not \(pages) pages of \(pageSize) bytes, as its header says"))
        }
    }

    /// SQLite's "not a database" and "malformed" become refusals; any other failure stays what it was.
    static func refusal(for error: StoreError, path: String) -> StoreError {
        switch error.code {
        case SQLITE_NOTADB: return .refused(DatabaseRefusal(.notADatabase, path: path, detail: error.sqliteText))
        case SQLITE_CORRUPT: return .refused(DatabaseRefusal(.corrupt, path: path, detail: error.sqliteText))
        default: return error
        }
    }

    private struct SchemaObject: Equatable {
        let type: String
        let name: String
        let table: String
        let sql: String
    }

    private static func schema(of database: Database) throws(StoreError) -> [SchemaObject] {
        // SQLite's own objects (autoindexes, sqlite_sequence, sqlite_stat*) follow from the rest or from ANALYZE.
        let statement = try database.prepare("""
            SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema
            WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name
            """)
        var objects: [SchemaObject] = []
        while try statement.step() {
            objects.append(SchemaObject(type: statement.string(at: 0) ?? "", name: statement.string(at: 1) ?? "",
                                        table: statement.string(at: 2) ?? "", sql: statement.string(at: 3) ?? ""))
        }
        return objects
    }

    /// The schema `migrations` make, built in memory by the same code that builds it on disk, so that what counts
    /// as "ours" follows the migration list as it grows and is compared statement text for statement text.
    private static func expectedSchema(after migrations: [Migrator.Migration]) throws(StoreError) -> [SchemaObject] {
        let scratch = try Database(opening: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        defer { scratch.close() }
        try Migrator.migrate(scratch, migrations: migrations, now: 0)
        return try schema(of: scratch)
    }

    private static func unrecognised(_ path: String, _ objects: [SchemaObject]) -> StoreError {
        let tables = objects.filter { $0.type == "table" }.map(\.name)
        let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
        return .refused(DatabaseRefusal(.unrecognisedSchema, path: path, detail: "tables: \(shown)"))
    }

    /// A read-only connection that leaves no trace: without a `-wal` beside it, the file alone is the whole
    /// database, and `immutable=1` reads it without creating `-wal` and `-shm` (a plain read-only open would,
    /// for a file in WAL mode). With a `-wal` there, that file is needed and already exists.
    private static func inspect(_ path: String) throws(StoreError) -> Database {
        let hasWAL = access(path + "-wal", F_OK) == 0
        let uri = "file:" + uriEscaped(path) + "?mode=ro" + (hasWAL ? "" : "&immutable=1")
        do throws(StoreError) {
            return try Database(opening: uri, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI)
        } catch {
            throw refusal(for: error, path: path)
        }
    }

    /// `path` as a URI's path: `%`, `?` and `#` (and anything outside printable ASCII) percent-encoded.
    static func uriEscaped(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x21, 0x7F...0xFF:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            default:
                out.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return out
    }
}
