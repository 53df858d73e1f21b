import Glibc

/// The databases of one benchmark run: SQLite files in the work directory, or databases on one PostgreSQL
/// server (a throwaway cluster of the benchmark's own, or the server `--postgresql` names).
final class BenchStorage {
    let backend: BenchBackend
    private let workDir: String
    private let cluster: PostgresCluster?
    private let server: String?
    private var made: Set<String> = []

    init(options: BenchOptions, workDir: String) throws(BenchError) {
        backend = options.backend
        self.workDir = workDir
        switch (options.backend, options.postgresql) {
        case (.sqlite, _):
            cluster = nil
            server = nil
        case (.postgresql, let given?):
            cluster = nil
            server = given
        case (.postgresql, nil):
            cluster = try PostgresCluster()
            server = nil
        }
    }

    /// What the figures were taken on, for the report's notes.
    var description: String {
        switch backend {
        case .sqlite: "storage: SQLite (synchronous=FULL), one file per database in the work directory"
        case .postgresql:
            if let cluster {
                "storage: PostgreSQL \(cluster.version), a throwaway cluster in \(cluster.directory) (Unix socket, fsync on, "
                    + "defaults otherwise), on the same host"
            } else {
                "storage: PostgreSQL at the server --postgresql names"
            }
        }
    }

    /// The database called `name`, and whether it was just made (empty: the caller seeds it). A file already in
    /// a kept work directory is reused; a PostgreSQL database is made afresh once per run.
    func database(_ name: String) throws(BenchError) -> (database: BenchDatabase, fresh: Bool) {
        switch backend {
        case .sqlite:
            let path = workDir + "/" + name + ".db"
            return (.sqlite(path: path), access(path, F_OK) != 0)
        case .postgresql:
            let database = "roster_bench_" + name
            let conninfo = conninfo(database: database)
            guard made.insert(database).inserted else { return (.postgresql(conninfo: conninfo), false) }
            let admin = try PostgresAdmin(conninfo: self.conninfo(database: "postgres"))
            try admin.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            try admin.execute("CREATE DATABASE \(database) TEMPLATE template0 ENCODING 'UTF8'")
            return (.postgresql(conninfo: conninfo), true)
        }
    }

    /// Bytes on disk: the file and its WAL, or `pg_database_size`.
    func size(of database: BenchDatabase) -> Int {
        switch database {
        case .sqlite(let path):
            return fileSize(path) + fileSize(path + "-wal")
        case .postgresql(let conninfo):
            let size = try? PostgresAdmin(conninfo: conninfo).execute("SELECT pg_database_size(current_database())")
            return size.flatMap { Int($0) } ?? 0
        }
    }

    /// Drops what this run made on a server of someone else's (unless kept), and stops the throwaway cluster.
    func finish(keep: Bool) {
        if server != nil, !keep, let admin = try? PostgresAdmin(conninfo: conninfo(database: "postgres")) {
            for database in made { _ = try? admin.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        }
        cluster?.destroy()
    }

    private func conninfo(database: String) -> String {
        if let cluster { return cluster.conninfo(database: database) }
        return BenchConninfo.replacingDatabase(server ?? "", with: database)
    }
}
