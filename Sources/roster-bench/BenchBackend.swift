/// Where the daemons under test keep their data (`--backend`).
enum BenchBackend: String, Sendable {
    case sqlite, postgresql
}

/// One database a scenario runs rosterd on: a file, or a database on a PostgreSQL server.
enum BenchDatabase: Equatable {
    case sqlite(path: String)
    case postgresql(conninfo: String)
}

/// libpq conninfo strings (`key=value` pairs), built and checked here so that a database name or a socket
/// directory is always one value, whatever it holds.
enum BenchConninfo {
    /// A value as libpq reads it: bare when it is plain, else single-quoted with `\` and `'` escaped.
    static func quoted(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-".unicodeScalars.contains(scalar)
        }
        if plain { return value }
        var escaped = "'"
        for character in value {
            if character == "\\" || character == "'" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped + "'"
    }

    /// `base` with its database replaced by `database` (libpq takes the last of a repeated key).
    static func replacingDatabase(_ base: String, with database: String) -> String {
        let trimmed = base.trimmingSpaces
        return (trimmed.isEmpty ? "" : trimmed + " ") + "dbname=" + quoted(database)
    }

    /// `text` if it is a key=value conninfo; a URI (`postgresql://…`) is refused, since another `dbname=` cannot
    /// be appended to one.
    static func checked(_ text: String) throws(BenchError) -> String {
        let trimmed = text.trimmingSpaces
        if trimmed.hasPrefix("postgresql://") || trimmed.hasPrefix("postgres://") {
            throw BenchError("--postgresql wants a key=value conninfo (host=... user=...), not a URI")
        }
        guard trimmed.isEmpty || trimmed.contains("=") else {
            throw BenchError("--postgresql: not a conninfo (key=value ...): \(text)")
        }
        return trimmed
    }
}

/// The configuration every benchmarked rosterd gets, and how it is told its database.
enum RosterdConfig {
    /// Room for 10,000 idle connections and a 200-log-in storm from one uid (the per-uid limit on failed
    /// log-ins counts attempts in flight, so its burst is raised, and so are the per-user queue budgets, which
    /// count a peer uid's log-ins; all of these log-ins succeed), and for the loop stall's 64 KiB of CSV in one
    /// line (escaped, its line breaks take twice the bytes).
    static let limits = """
        [Server]
        MaxLineBytes=131072
        MaxConnections=20000
        MaxConnectionsPerUser=20000
        MaxQueuedJobsPerUser=1024
        MaxQueuedJobsPerConnection=1024
        [Login]
        RateLimitBurst=100
        [Hashing]
        QueueLimit=1024

        """

    /// The whole file for a daemon on `database`.
    static func text(for database: BenchDatabase) -> String {
        switch database {
        case .sqlite:
            return limits
        case .postgresql(let conninfo):
            // The file is the daemon's own config, read as systemd-style key=value: the conninfo is the rest of
            // the line, kept as given.
            return limits + "[Storage]\nBackend=postgresql\n[PostgreSQL]\nConnection=\(conninfo)\n"
        }
    }

    /// The command-line arguments that name the database (none for PostgreSQL: the config names it).
    static func arguments(for database: BenchDatabase) -> [String] {
        switch database {
        case .sqlite(let path): ["--database", path]
        case .postgresql: []
        }
    }
}

extension String {
    var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return String(slice)
    }
}
