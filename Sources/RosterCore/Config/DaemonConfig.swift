/// Everything rosterd takes from its configuration files: the forms' rules (`policy`) and the daemon's resources
/// (`server`).
///
/// Theory of operation. `parse(files:)` reads the files in the order given (lowest priority first, see
/// `ConfigPaths`). Every section header and assignment is checked where it stands, so the first problem in reading
/// order is the one reported, with its file and line; nothing is applied from a set of files that has any problem,
/// so the daemon can keep its previous config. The last assignment of each key wins. Then `[Validation] Preset=`
/// (the last one, wherever it was) picks the base policy, and every other key that was assigned overrides its field:
/// `Preset=hardened` with `PasswordMinLength=20` gives 20, whichever came first. Finally, pairs are checked
/// (a minimum may not exceed its maximum), blaming the one of the two assigned later.
///
/// An empty assignment (`Key=`) resets the key to its default (the preset's value, or `ServerSettings`' default), so
/// a drop-in can undo a vendor file's override, except for the `…ForbiddenCharacters=` keys, where empty means none.
///
/// Keys and accepted values:
///
/// | key | value |
/// |---|---|
/// | `[Validation] Preset=` | `seed` (default) or `hardened` |
/// | `UsernameMinLength=`, `UsernameMaxLength=` | 1…256 characters, min ≤ max |
/// | `PasswordMinLength=`, `PasswordMaxLength=` | 1…1024 characters, min ≤ max |
/// | `UsernameForbiddenCharacters=`, `PasswordForbiddenCharacters=` | the characters, as written; empty for none; wrap in `"…"` to keep blanks at either end |
/// | `PasswordNFKC=`, `PasswordQualityCheck=` | boolean |
/// | `[Timing] DebounceMs=`, `ThrottleMs=` | 0…10000 (milliseconds, `session.hello`'s range) |
/// | `[Login] RevealUnknownUsers=` | boolean |
/// | `RateLimitBurst=` | 1…1000000 |
/// | `RateLimitIntervalSec=` | time span, 1s…1w |
/// | `SessionIdleSec=` | time span, 1s…365d |
/// | `MaxSessionsPerUser=` | 1…1000000 (default 200); past it a log-in revokes the least recently used tokens |
/// | `[Hashing] MemoryKiB=` | 8…4194304 (libsodium's Argon2id floor of 8 KiB up to 4 GiB) |
/// | `Iterations=` | 1…100 (libsodium's floor is 1; beyond 100 a log-in takes seconds even at the floor's memory) |
/// | `Workers=` | 0…1024, 0 = one per core |
/// | `QueueLimit=` | 1…1000000 |
/// | `[Server] Socket=` | absolute path of at most 107 bytes (`sun_path`) |
/// | `Database=` | absolute path |
/// | `LogLevel=` | `emerg alert crit err warning notice info debug` or 0…7 |
/// | `MaxLineBytes=` | size, 1K…16M |
/// | `MaxSessionLineBytes=` | size, 1K…16M (a logged-in session's lines; default 2M) |
/// | `MaxConnections=`, `MaxConnectionsPerUser=` | 1…1000000 |
/// | `IdleLineTimeoutSec=`, `OutputStallTimeoutSec=` | time span, 1ms…1d |
/// | `OutputSoftLimitBytes=`, `OutputHardLimitBytes=` | size, 1K…1G, soft ≤ hard |
/// | `StorageWorkers=` | 0…1024, 0 = one per core, at least 2 |
/// | `MaxQueuedJobs=`, `MaxQueuedJobsPerUser=`, `MaxQueuedJobsPerConnection=` | 1…1000000 |
/// | `MaxQueuedImportBytes=`, `MaxQueuedImportBytesPerUser=` | size, 1K…1G |
/// | `OutputPauseBytes=`, `OutputResumeBytes=` | size, 1K…1G, resume ≤ pause |
/// | `MaxRequestsInFlight=` | 1…1000000 |
/// | `OutputBudgetBytes=`, `OutputBudgetPerUserBytes=` | size, 64K…64G, per user ≤ total |
/// | `GatewayUsers=` | user names or numeric uids, space-separated (default `roster-web`) |
/// | `[Storage] Backend=` | `sqlite` (default) or `postgresql`; read at start only |
/// | `[PostgreSQL] Connection=` | a libpq conninfo string or URI (default `host=/run/postgresql dbname=roster`); read at start only |
/// | `Connections=` | 1…64 (default 4); read at start only |
/// | `StatementTimeoutSec=` | time span, 100ms…10min (default 5s); read at start only |
/// | `[Secrets] KeyFile=` | absolute path (default `roster.key` beside the database); read at start only |
/// | `[Audit] RetentionDays=` | 1…36500 (default 90) |
/// | `MaxFollowers=` | 1…1000000 (default 16) |
/// | `FailedLoginEntriesPerMinute=` | 1…1000000 (default 10) per peer uid, on unknown names (see `FailedLoginEntryCap`) |
/// | `[Mail] Sendmail=` | absolute path of a sendmail-compatible program (default none: mail off) |
/// | `From=` | `local@domain` or `Name <local@domain>`, the address ASCII, not starting with `-` (default `roster@` + host name) |
/// | `BaseURL=` | `http://` or `https://` URL without query or fragment (default `http://127.0.0.1:8080`) |
/// | `CodeMinutes=` | 1…1440 (default 15) |
/// | `[WebAuthn] RPID=` | lowercase domain name (default `localhost`) |
/// | `RPName=` | 1…64 characters, no control characters (default `Roster`) |
/// | `Origins=` | space-separated `http(s)://host[:port]` on the RP ID (default `http://localhost:8080 http://127.0.0.1:8080`) |
///
/// Booleans, time spans and sizes are spelled as in systemd (see `ConfigValue`).
public struct DaemonConfig: Equatable, Sendable {
    public var policy: Policy
    public var server: ServerSettings
    public var storage: StorageSettings
    public var audit: AuditSettings
    public var mail: MailSettings
    public var webAuthn: WebAuthnSettings

    public init(policy: Policy = .seed, server: ServerSettings = ServerSettings(),
                storage: StorageSettings = StorageSettings(), audit: AuditSettings = AuditSettings(),
                mail: MailSettings = MailSettings(), webAuthn: WebAuthnSettings = WebAuthnSettings()) {
        self.policy = policy
        self.server = server
        self.storage = storage
        self.audit = audit
        self.mail = mail
        self.webAuthn = webAuthn
    }

    /// What a reload puts in force when `fresh` was read while `self` was: all of `fresh` except the storage keys,
    /// which name the database the daemon opened at start and keep their values until a restart. `kept` names each
    /// such key whose new value was not applied, for the log.
    public func reloaded(from fresh: DaemonConfig) -> (config: DaemonConfig, kept: [String]) {
        var config = fresh
        config.storage = storage
        var kept: [String] = []
        if fresh.storage.backend != storage.backend { kept.append("[Storage] Backend=") }
        if fresh.storage.postgresqlConnection != storage.postgresqlConnection { kept.append("[PostgreSQL] Connection=") }
        if fresh.storage.postgresqlConnections != storage.postgresqlConnections { kept.append("[PostgreSQL] Connections=") }
        if fresh.storage.postgresqlStatementTimeout != storage.postgresqlStatementTimeout {
            kept.append("[PostgreSQL] StatementTimeoutSec=")
        }
        if fresh.storage.keyFilePath != storage.keyFilePath { kept.append("[Secrets] KeyFile=") }
        return (config, kept)
    }

    /// The configuration of the given files, lowest priority first; an empty list gives the defaults.
    public static func parse(files: [(path: String, text: String)]) throws(ConfigError) -> DaemonConfig {
        var assignments: [ConfigKey: Assignment] = [:]
        var order = 0
        for file in files {
            let scan = IniParser.scan(file.text, path: file.path)
            for item in scan.items {
                switch item {
                case .section(let name, let line):
                    guard ConfigSection(rawValue: name) != nil else {
                        throw ConfigError(kind: .unknownSection, path: file.path, line: line,
                                          detail: ConfigSection.unknownDetail(name))
                    }
                case .entry(let entry):
                    let key = try ConfigKey.lookUp(entry)
                    assignments[key] = Assignment(entry: entry, order: order,
                                                  resolved: try key.resolve(ValueReader(entry: entry)))
                    order += 1
                }
            }
            if let error = scan.error { throw error }
        }

        var preset = Policy.Preset.seed
        if case .preset(let chosen)? = assignments[.preset]?.resolved { preset = chosen }
        var config = DaemonConfig(policy: .preset(preset))
        for assignment in assignments.values {
            switch assignment.resolved {
            case .preset: break
            case .setter(let apply): apply(&config)
            }
        }

        try checkOrder(config, assignments, min: .usernameMinLength, max: .usernameMaxLength,
                       \.policy.usernameMinLength, \.policy.usernameMaxLength, format: { "\($0)" })
        try checkOrder(config, assignments, min: .passwordMinLength, max: .passwordMaxLength,
                       \.policy.passwordMinLength, \.policy.passwordMaxLength, format: { "\($0)" })
        try checkOrder(config, assignments, min: .outputSoftLimitBytes, max: .outputHardLimitBytes,
                       \.server.outputSoftLimitBytes, \.server.outputHardLimitBytes, format: ConfigValue.formatSize)
        try checkOrder(config, assignments, min: .outputResumeBytes, max: .outputPauseBytes,
                       \.server.outputResumeBytes, \.server.outputPauseBytes, format: ConfigValue.formatSize)
        try checkOrder(config, assignments, min: .outputBudgetPerUserBytes, max: .outputBudgetBytes,
                       \.server.outputBudgetPerUIDBytes, \.server.outputBudgetBytes, format: ConfigValue.formatSize)
        try checkOrigins(config, assignments)
        return config
    }

    /// Every origin must be on the RP ID in force, whichever of the two keys was written (or left at its default).
    static func checkOrigins(_ config: DaemonConfig, _ assignments: [ConfigKey: Assignment]) throws(ConfigError) {
        let settings = config.webAuthn
        for origin in settings.origins {
            guard let problem = WebAuthnSettings.originProblem(origin, rpID: settings.rpID) else { continue }
            let blamed = assignments[.origins] ?? assignments[.rpID]
            throw ConfigError(kind: .invalidValue, path: blamed?.entry.path ?? "", line: blamed?.entry.line ?? 0,
                              detail: "Origins= \(ConfigError.quote(origin)) \(problem)")
        }
    }

    /// The values a key returns to on an empty assignment: the preset's policy and the server defaults.
    static func defaults(for preset: Policy.Preset) -> DaemonConfig {
        DaemonConfig(policy: .preset(preset))
    }

    /// Refuses `min > max`, blaming whichever of the two was assigned later (the presets themselves are consistent,
    /// so at least one of them was assigned whenever the check fails).
    static func checkOrder(_ config: DaemonConfig, _ assignments: [ConfigKey: Assignment],
                           min: ConfigKey, max: ConfigKey,
                           _ minPath: KeyPath<DaemonConfig, Int>, _ maxPath: KeyPath<DaemonConfig, Int>,
                           format: (Int) -> String) throws(ConfigError) {
        let low = config[keyPath: minPath], high = config[keyPath: maxPath]
        guard low > high else { return }
        let minAssignment = assignments[min], maxAssignment = assignments[max]
        let blameMax = (maxAssignment?.order ?? -1) > (minAssignment?.order ?? -1)
        guard let blamed = blameMax ? maxAssignment : minAssignment else { return }
        let detail = blameMax
            ? "\(max.name)= must not be less than \(min.name)= (\(format(low))), got \(format(high))"
            : "\(min.name)= must not be greater than \(max.name)= (\(format(high))), got \(format(low))"
        throw ConfigError(kind: .outOfRange, path: blamed.entry.path, line: blamed.entry.line, detail: detail)
    }
}

/// The sections rosterd knows; the raw value is the header's spelling.
enum ConfigSection: String, CaseIterable {
    case validation = "Validation"
    case timing = "Timing"
    case login = "Login"
    case hashing = "Hashing"
    case server = "Server"
    case storage = "Storage"
    case postgreSQL = "PostgreSQL"
    case secrets = "Secrets"
    case audit = "Audit"
    case mail = "Mail"
    case webAuthn = "WebAuthn"

    static func unknownDetail(_ name: String) -> String {
        let known = allCases.map { "[\($0.rawValue)]" }.joined(separator: ", ")
        if let near = allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) {
            return "unknown section [\(name)] (names are case-sensitive: did you mean [\(near.rawValue)]?)"
        }
        return "unknown section [\(name)]; known sections are \(known)"
    }
}

/// Every key of every section; `name` is its spelling in the file.
enum ConfigKey: CaseIterable {
    case preset, usernameMinLength, usernameMaxLength, passwordMinLength, passwordMaxLength
    case usernameForbiddenCharacters, passwordForbiddenCharacters, passwordNFKC, passwordQualityCheck
    case debounceMs, throttleMs
    case revealUnknownUsers, rateLimitBurst, rateLimitIntervalSec, sessionIdleSec, maxSessionsPerUser
    case memoryKiB, iterations, workers, queueLimit
    case socket, database, logLevel, maxLineBytes, maxSessionLineBytes, maxConnections, maxConnectionsPerUser, idleLineTimeoutSec
    case outputSoftLimitBytes, outputHardLimitBytes, outputStallTimeoutSec
    case storageWorkers, maxQueuedJobs, maxQueuedJobsPerUser, maxQueuedJobsPerConnection
    case maxQueuedImportBytes, maxQueuedImportBytesPerUser
    case outputPauseBytes, outputResumeBytes, maxRequestsInFlight, outputBudgetBytes, outputBudgetPerUserBytes
    case gatewayUsers
    case backend, postgresqlConnection, postgresqlConnections, postgresqlStatementTimeoutSec
    case keyFile
    case retentionDays, maxFollowers
    case failedLoginEntriesPerMinute
    case sendmail, mailFrom, baseURL, codeMinutes
    case rpID, rpName, origins

    var section: ConfigSection {
        switch self {
        case .preset, .usernameMinLength, .usernameMaxLength, .passwordMinLength, .passwordMaxLength,
             .usernameForbiddenCharacters, .passwordForbiddenCharacters, .passwordNFKC, .passwordQualityCheck:
            .validation
        case .debounceMs, .throttleMs:
            .timing
        case .revealUnknownUsers, .rateLimitBurst, .rateLimitIntervalSec, .sessionIdleSec, .maxSessionsPerUser:
            .login
        case .memoryKiB, .iterations, .workers, .queueLimit:
            .hashing
        case .socket, .database, .logLevel, .maxLineBytes, .maxSessionLineBytes, .maxConnections, .maxConnectionsPerUser,
             .idleLineTimeoutSec, .outputSoftLimitBytes, .outputHardLimitBytes, .outputStallTimeoutSec,
             .storageWorkers, .maxQueuedJobs, .maxQueuedJobsPerUser, .maxQueuedJobsPerConnection,
             .maxQueuedImportBytes, .maxQueuedImportBytesPerUser,
             .outputPauseBytes, .outputResumeBytes, .maxRequestsInFlight, .outputBudgetBytes, .outputBudgetPerUserBytes,
             .gatewayUsers:
            .server
        case .backend:
            .storage
        case .postgresqlConnection, .postgresqlConnections, .postgresqlStatementTimeoutSec:
            .postgreSQL
        case .keyFile:
            .secrets
        case .retentionDays, .maxFollowers, .failedLoginEntriesPerMinute:
            .audit
        case .sendmail, .mailFrom, .baseURL, .codeMinutes:
            .mail
        case .rpID, .rpName, .origins:
            .webAuthn
        }
    }

    var name: String {
        switch self {
        case .preset: "Preset"
        case .usernameMinLength: "UsernameMinLength"
        case .usernameMaxLength: "UsernameMaxLength"
        case .passwordMinLength: "PasswordMinLength"
        case .passwordMaxLength: "PasswordMaxLength"
        case .usernameForbiddenCharacters: "UsernameForbiddenCharacters"
        case .passwordForbiddenCharacters: "PasswordForbiddenCharacters"
        case .passwordNFKC: "PasswordNFKC"
        case .passwordQualityCheck: "PasswordQualityCheck"
        case .debounceMs: "DebounceMs"
        case .throttleMs: "ThrottleMs"
        case .revealUnknownUsers: "RevealUnknownUsers"
        case .rateLimitBurst: "RateLimitBurst"
        case .rateLimitIntervalSec: "RateLimitIntervalSec"
        case .sessionIdleSec: "SessionIdleSec"
        case .maxSessionsPerUser: "MaxSessionsPerUser"
        case .memoryKiB: "MemoryKiB"
        case .iterations: "Iterations"
        case .workers: "Workers"
        case .queueLimit: "QueueLimit"
        case .socket: "Socket"
        case .database: "Database"
        case .logLevel: "LogLevel"
        case .maxLineBytes: "MaxLineBytes"
        case .maxSessionLineBytes: "MaxSessionLineBytes"
        case .maxConnections: "MaxConnections"
        case .maxConnectionsPerUser: "MaxConnectionsPerUser"
        case .idleLineTimeoutSec: "IdleLineTimeoutSec"
        case .outputSoftLimitBytes: "OutputSoftLimitBytes"
        case .outputHardLimitBytes: "OutputHardLimitBytes"
        case .outputStallTimeoutSec: "OutputStallTimeoutSec"
        case .storageWorkers: "StorageWorkers"
        case .maxQueuedJobs: "MaxQueuedJobs"
        case .maxQueuedJobsPerUser: "MaxQueuedJobsPerUser"
        case .maxQueuedJobsPerConnection: "MaxQueuedJobsPerConnection"
        case .maxQueuedImportBytes: "MaxQueuedImportBytes"
        case .maxQueuedImportBytesPerUser: "MaxQueuedImportBytesPerUser"
        case .outputPauseBytes: "OutputPauseBytes"
        case .outputResumeBytes: "OutputResumeBytes"
        case .maxRequestsInFlight: "MaxRequestsInFlight"
        case .outputBudgetBytes: "OutputBudgetBytes"
        case .outputBudgetPerUserBytes: "OutputBudgetPerUserBytes"
        case .gatewayUsers: "GatewayUsers"
        case .backend: "Backend"
        case .postgresqlConnection: "Connection"
        case .postgresqlConnections: "Connections"
        case .postgresqlStatementTimeoutSec: "StatementTimeoutSec"
        case .keyFile: "KeyFile"
        case .retentionDays: "RetentionDays"
        case .maxFollowers: "MaxFollowers"
        case .failedLoginEntriesPerMinute: "FailedLoginEntriesPerMinute"
        case .sendmail: "Sendmail"
        case .mailFrom: "From"
        case .baseURL: "BaseURL"
        case .codeMinutes: "CodeMinutes"
        case .rpID: "RPID"
        case .rpName: "RPName"
        case .origins: "Origins"
        }
    }

    static let usernameLengthsRange = 1...256
    static let passwordLengthsRange = 1...1024
    static let timingMillisecondsRange = 0...10_000
    static let countsRange = 1...1_000_000
    static let memoryKiBRange = 8...4_194_304
    static let iterationsRange = 1...100
    static let workersRange = 0...1024
    static let maxLineBytesRange = 1024...(16 << 20)
    static let outputBytesRange = 1024...(1 << 30)
    static let queuedBytesRange = 1024...(1 << 30)
    static let outputBudgetRange = (64 << 10)...(64 << 30)
    static let rateLimitIntervalRange = Duration.seconds(1)...Duration.seconds(7 * 86_400)
    static let sessionIdleRange = Duration.seconds(1)...Duration.seconds(365 * 86_400)
    static let timeoutsRange = Duration.milliseconds(1)...Duration.seconds(86_400)
    /// `sizeof(sockaddr_un.sun_path)` on Linux is 108, one of which is the terminating NUL.
    static let socketPathBytes = 107

    /// The key an entry assigns, or `unknown_section` / `unknown_key` naming its file and line.
    static func lookUp(_ entry: IniEntry) throws(ConfigError) -> ConfigKey {
        guard let section = ConfigSection(rawValue: entry.section) else {
            throw ConfigError(kind: .unknownSection, path: entry.path, line: entry.line,
                              detail: ConfigSection.unknownDetail(entry.section))
        }
        if let key = allCases.first(where: { $0.section == section && $0.name == entry.key }) { return key }
        let hint: String
        if let elsewhere = allCases.first(where: { $0.name == entry.key }) {
            hint = " (it belongs in [\(elsewhere.section.rawValue)])"
        } else if let near = allCases.first(where: { $0.name.lowercased() == entry.key.lowercased() }) {
            hint = " (keys are case-sensitive: did you mean \(near.name)= in [\(near.section.rawValue)]?)"
        } else {
            let known = allCases.filter { $0.section == section }.map(\.name).joined(separator: ", ")
            hint = "; known keys are \(known)"
        }
        throw ConfigError(kind: .unknownKey, path: entry.path, line: entry.line,
                          detail: "unknown key \(entry.key)= in [\(section.rawValue)]\(hint)")
    }

    /// Parses the entry's value for this key into what applying it will do.
    func resolve(_ value: ValueReader) throws(ConfigError) -> Resolved {
        switch self {
        case .preset:
            return .preset(try value.preset())
        case .usernameMinLength:
            return set(\.policy.usernameMinLength, try value.integer(Self.usernameLengthsRange, " of characters"))
        case .usernameMaxLength:
            return set(\.policy.usernameMaxLength, try value.integer(Self.usernameLengthsRange, " of characters"))
        case .passwordMinLength:
            return set(\.policy.passwordMinLength, try value.integer(Self.passwordLengthsRange, " of characters"))
        case .passwordMaxLength:
            return set(\.policy.passwordMaxLength, try value.integer(Self.passwordLengthsRange, " of characters"))
        case .usernameForbiddenCharacters:
            return set(\.policy.usernameForbiddenCharacters, ForbiddenCharacters(value.characters()))
        case .passwordForbiddenCharacters:
            return set(\.policy.passwordForbiddenCharacters, ForbiddenCharacters(value.characters()))
        case .passwordNFKC:
            return set(\.policy.passwordNFKC, try value.boolean())
        case .passwordQualityCheck:
            return set(\.policy.passwordQualityCheck, try value.boolean())
        case .debounceMs:
            return set(\.policy.debounce, try value.milliseconds(Self.timingMillisecondsRange))
        case .throttleMs:
            return set(\.policy.throttle, try value.milliseconds(Self.timingMillisecondsRange))
        case .revealUnknownUsers:
            return set(\.policy.revealUnknownUsers, try value.boolean())
        case .rateLimitBurst:
            return set(\.policy.rateLimitBurst, try value.integer(Self.countsRange, " of failed log-ins"))
        case .rateLimitIntervalSec:
            return set(\.policy.rateLimitInterval, try value.timeSpan(Self.rateLimitIntervalRange))
        case .sessionIdleSec:
            return set(\.policy.sessionIdle, try value.timeSpan(Self.sessionIdleRange))
        case .maxSessionsPerUser:
            return set(\.policy.maxSessionsPerUser, try value.integer(Self.countsRange, " of sessions"))
        case .memoryKiB:
            return set(\.policy.hashMemoryKiB, try value.integer(Self.memoryKiBRange, " of KiB"))
        case .iterations:
            return set(\.policy.hashIterations, try value.integer(Self.iterationsRange, " of passes"))
        case .workers:
            return set(\.server.hashWorkers, try value.integer(Self.workersRange, " of threads (0 = one per core)"))
        case .queueLimit:
            return set(\.server.hashQueueLimit, try value.integer(Self.countsRange, " of waiting jobs"))
        case .socket:
            return set(\.server.socketPath, try value.absolutePath(maxBytes: Self.socketPathBytes))
        case .database:
            return set(\.server.databasePath, try value.absolutePath(maxBytes: nil))
        case .logLevel:
            return set(\.server.logLevel, try value.logLevel())
        case .maxLineBytes:
            return set(\.server.maxLineBytes, try value.size(Self.maxLineBytesRange))
        case .maxSessionLineBytes:
            return set(\.server.maxSessionLineBytes, try value.size(Self.maxLineBytesRange))
        case .maxConnections:
            return set(\.server.maxConnections, try value.integer(Self.countsRange, " of connections"))
        case .maxConnectionsPerUser:
            return set(\.server.maxConnectionsPerUID, try value.integer(Self.countsRange, " of connections"))
        case .idleLineTimeoutSec:
            return set(\.server.idleLineTimeout, try value.timeSpan(Self.timeoutsRange))
        case .outputSoftLimitBytes:
            return set(\.server.outputSoftLimitBytes, try value.size(Self.outputBytesRange))
        case .outputHardLimitBytes:
            return set(\.server.outputHardLimitBytes, try value.size(Self.outputBytesRange))
        case .outputStallTimeoutSec:
            return set(\.server.outputStallTimeout, try value.timeSpan(Self.timeoutsRange))
        case .storageWorkers:
            return set(\.server.storageWorkers, try value.integer(Self.workersRange, " of threads (0 = one per core)"))
        case .maxQueuedJobs:
            return set(\.server.maxQueuedJobs, try value.integer(Self.countsRange, " of queued jobs"))
        case .maxQueuedJobsPerUser:
            return set(\.server.maxQueuedJobsPerUser, try value.integer(Self.countsRange, " of queued jobs"))
        case .maxQueuedJobsPerConnection:
            return set(\.server.maxQueuedJobsPerConnection, try value.integer(Self.countsRange, " of queued jobs"))
        case .maxQueuedImportBytes:
            return set(\.server.maxQueuedImportBytes, try value.size(Self.queuedBytesRange))
        case .maxQueuedImportBytesPerUser:
            return set(\.server.maxQueuedImportBytesPerUser, try value.size(Self.queuedBytesRange))
        case .outputPauseBytes:
            return set(\.server.outputPauseBytes, try value.size(Self.outputBytesRange))
        case .outputResumeBytes:
            return set(\.server.outputResumeBytes, try value.size(Self.outputBytesRange))
        case .maxRequestsInFlight:
            return set(\.server.maxRequestsInFlight, try value.integer(Self.countsRange, " of requests"))
        case .outputBudgetBytes:
            return set(\.server.outputBudgetBytes, try value.size(Self.outputBudgetRange))
        case .outputBudgetPerUserBytes:
            return set(\.server.outputBudgetPerUIDBytes, try value.size(Self.outputBudgetRange))
        case .gatewayUsers:
            return set(\.server.gatewayUsers, try value.userNames())
        case .backend:
            return set(\.storage.backend, try value.backend())
        case .postgresqlConnection:
            return set(\.storage.postgresqlConnection, try value.conninfo())
        case .postgresqlConnections:
            return set(\.storage.postgresqlConnections,
                       try value.integer(StorageSettings.connectionsRange, " of connections"))
        case .postgresqlStatementTimeoutSec:
            return set(\.storage.postgresqlStatementTimeout, try value.timeSpan(StorageSettings.statementTimeoutRange))
        case .keyFile:
            return set(\.storage.keyFilePath, try value.absolutePath(maxBytes: nil))
        case .retentionDays:
            return set(\.audit.retentionDays, try value.integer(AuditSettings.retentionDaysRange, " of days"))
        case .maxFollowers:
            return set(\.audit.maxFollowers, try value.integer(AuditSettings.maxFollowersRange, " of connections"))
        case .failedLoginEntriesPerMinute:
            return set(\.audit.failedLoginEntriesPerMinute, try value.integer(Self.countsRange, " of entries per peer"))
        case .sendmail:
            return set(\.mail.sendmail, try value.absolutePath(maxBytes: nil))
        case .mailFrom:
            return set(\.mail.from, try value.mailbox())
        case .baseURL:
            return set(\.mail.baseURL, try value.baseURL())
        case .codeMinutes:
            return set(\.mail.codeMinutes, try value.integer(MailSettings.codeMinutesRange, " of minutes"))
        case .rpID:
            return set(\.webAuthn.rpID, try value.rpID())
        case .rpName:
            return set(\.webAuthn.rpName, try value.rpName())
        case .origins:
            return set(\.webAuthn.origins, try value.origins())
        }
    }

    /// Stores `value`, or with nil (an empty assignment) the default of the preset finally in force.
    private func set<Value>(_ path: WritableKeyPath<DaemonConfig, Value>, _ value: Value?) -> Resolved {
        if let value {
            return .setter { config in config[keyPath: path] = value }
        }
        return .setter { config in
            config[keyPath: path] = DaemonConfig.defaults(for: config.policy.preset)[keyPath: path]
        }
    }
}

/// What an assignment does once the preset is known.
enum Resolved {
    case preset(Policy.Preset)
    case setter((inout DaemonConfig) -> Void)
}

/// The winning assignment of a key; `order` ranks assignments across all files for "which came later".
struct Assignment {
    var entry: IniEntry
    var order: Int
    var resolved: Resolved
}

/// Reads one entry's value as the key's type; nil from a reader means the value was empty (reset to default).
struct ValueReader {
    var entry: IniEntry

    private func failure(_ kind: ConfigError.Kind, expected: String) -> ConfigError {
        ConfigError(kind: kind, path: entry.path, line: entry.line,
                    detail: "\(entry.key)= expects \(expected), got \(ConfigError.quote(entry.value))")
    }

    private func kind(of failure: ConfigValueFailure) -> ConfigError.Kind {
        switch failure {
        case .malformed: .invalidValue
        case .overflow: .outOfRange
        }
    }

    func integer(_ range: ClosedRange<Int>, _ unit: String) throws(ConfigError) -> Int? {
        guard !entry.value.isEmpty else { return nil }
        let expected = "a whole number\(unit) from \(range.lowerBound) to \(range.upperBound)"
        let number: Int
        do throws(ConfigValueFailure) {
            number = try ConfigValue.wholeNumber(entry.value)
        } catch {
            throw failure(kind(of: error), expected: expected)
        }
        guard range.contains(number) else { throw failure(.outOfRange, expected: expected) }
        return number
    }

    func milliseconds(_ range: ClosedRange<Int>) throws(ConfigError) -> Duration? {
        try integer(range, " of milliseconds").map { .milliseconds($0) }
    }

    func boolean() throws(ConfigError) -> Bool? {
        guard !entry.value.isEmpty else { return nil }
        guard let flag = ConfigValue.boolean(entry.value) else {
            throw failure(.invalidValue, expected: "a boolean (yes/no, true/false, on/off, 1/0)")
        }
        return flag
    }

    func timeSpan(_ range: ClosedRange<Duration>) throws(ConfigError) -> Duration? {
        guard !entry.value.isEmpty else { return nil }
        let expected = "a time span such as 300, 5min or 1h 30min, from \(ConfigValue.format(range.lowerBound)) "
            + "to \(ConfigValue.format(range.upperBound))"
        let span: Duration
        do throws(ConfigValueFailure) {
            span = try ConfigValue.timeSpan(entry.value)
        } catch {
            throw failure(kind(of: error), expected: expected)
        }
        guard range.contains(span) else { throw failure(.outOfRange, expected: expected) }
        return span
    }

    func size(_ range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard !entry.value.isEmpty else { return nil }
        let expected = "a size in bytes, optionally with a K, M or G suffix (base 1024), from "
            + "\(ConfigValue.formatSize(range.lowerBound)) to \(ConfigValue.formatSize(range.upperBound))"
        let bytes: Int
        do throws(ConfigValueFailure) {
            bytes = try ConfigValue.size(entry.value)
        } catch {
            throw failure(kind(of: error), expected: expected)
        }
        guard range.contains(bytes) else { throw failure(.outOfRange, expected: expected) }
        return bytes
    }

    /// Never nil: an empty value is a meaningful "forbid nothing". Surrounding double quotes are removed so that
    /// blanks at either end, which trimming would lose, can be forbidden too.
    func characters() -> Set<Character> {
        let text = entry.value
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
            return Set(text.dropFirst().dropLast())
        }
        return Set(text)
    }

    func absolutePath(maxBytes: Int?) throws(ConfigError) -> String?? {
        guard !entry.value.isEmpty else { return nil }
        let limit = maxBytes.map { " of at most \($0) bytes" } ?? ""
        let expected = "an absolute path\(limit) naming a file"
        let path = entry.value
        guard path.hasPrefix("/"), !path.hasSuffix("/"), !path.unicodeScalars.contains("\0") else {
            throw failure(.invalidValue, expected: expected)
        }
        if let maxBytes, path.utf8.count > maxBytes { throw failure(.outOfRange, expected: expected) }
        return .some(path)
    }

    /// Space-separated user names (as useradd takes them: letters, digits, `_ . -`, not starting with `-`, at most
    /// 32 bytes) or numeric uids; resolved to uids at the daemon's edge, so a name that does not exist is no error
    /// here.
    func userNames() throws(ConfigError) -> [GatewayUser]? {
        guard !entry.value.isEmpty else { return nil }
        let expected = "user names or numeric uids separated by blanks"
        var users: [GatewayUser] = []
        for word in entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            guard let user = GatewayUser(String(word)) else { throw failure(.invalidValue, expected: expected) }
            users.append(user)
        }
        return users
    }

    func logLevel() throws(ConfigError) -> LogLevel? {
        guard !entry.value.isEmpty else { return nil }
        guard let level = LogLevel(parsing: entry.value) else {
            let names = LogLevel.allCases.map(\.name).joined(separator: ", ")
            throw failure(.invalidValue, expected: "one of \(names), or 0 to 7")
        }
        return level
    }

    func backend() throws(ConfigError) -> StorageSettings.Backend? {
        guard !entry.value.isEmpty else { return nil }
        guard let backend = StorageSettings.Backend(rawValue: entry.value) else {
            let names = StorageSettings.Backend.allCases.map(\.rawValue).joined(separator: " or ")
            throw failure(.invalidValue, expected: names)
        }
        return backend
    }

    /// libpq parses the string itself when it connects; here only what can never work is refused. An error names
    /// the key, never the value, which may hold a password.
    func conninfo() throws(ConfigError) -> String? {
        guard !entry.value.isEmpty else { return nil }
        guard !entry.value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" }) else {
            throw ConfigError(kind: .invalidValue, path: entry.path, line: entry.line,
                              detail: "\(entry.key)= expects a libpq connection string without control characters")
        }
        return entry.value
    }

    /// A sender as `MailMailbox` reads one (`roster@example.org`, `Roster <roster@example.org>`), whose address
    /// sendmail can take as an argument; the error says which rule it breaks.
    func mailbox() throws(ConfigError) -> MailMailbox?? {
        guard !entry.value.isEmpty else { return nil }
        let expected = "a mail address such as roster@example.org or Roster <roster@example.org>"
        let mailbox: MailMailbox
        do throws(MailMessageError) {
            mailbox = try MailMailbox(parsing: entry.value)
        } catch {
            throw failure(.invalidValue, expected: expected + " (this one \(Self.words(for: error)))")
        }
        if let problem = MailSettings.addressProblem(mailbox.address.text) {
            throw failure(.invalidValue, expected: expected + " (this one \(problem))")
        }
        return .some(mailbox)
    }

    /// What a refused sender breaks, in the words of a configuration error.
    private static func words(for error: MailMessageError) -> String {
        switch error {
        case .addressHasControl, .textHasControl: "holds a control character"
        case .addressNotASCII: "is not ASCII"
        case .addressTooLong: "is longer than an address may be"
        case .addressMalformed: "is not of the form local@domain"
        case .mailboxMalformed: "is neither an address nor Name <address>"
        case .codeMalformed, .codeMinutesOutOfRange, .baseURLMalformed, .messageIDMalformed: error.reason
        }
    }

    func baseURL() throws(ConfigError) -> MailBaseURL? {
        guard !entry.value.isEmpty else { return nil }
        do throws(MailMessageError) {
            return try MailBaseURL(parsing: entry.value)
        } catch {
            let problem: String
            switch MailBaseURL.problem(in: entry.value) {
            case .scheme?: problem = "does not start with http:// or https://"
            case .queryOrFragment?: problem = "holds a query or a fragment"
            case .character?: problem = "holds a blank, a control character, non-ASCII or one of \"<>\\^`{|} (percent-encode it)"
            case .host?: problem = "names no host"
            case nil: problem = error.reason
            }
            throw failure(.invalidValue, expected: "an http:// or https:// address such as https://roster.example.org "
                          + "(this one \(problem))")
        }
    }

    func rpID() throws(ConfigError) -> String? {
        guard !entry.value.isEmpty else { return nil }
        if let problem = WebAuthnSettings.rpIDProblem(entry.value) {
            throw failure(.invalidValue, expected: "a domain name such as localhost or roster.example.org (this one \(problem))")
        }
        return entry.value
    }

    func rpName() throws(ConfigError) -> String? {
        guard !entry.value.isEmpty else { return nil }
        guard entry.value.count <= WebAuthnSettings.rpNameMaxLength,
              !entry.value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw failure(.invalidValue, expected: "a name of at most \(WebAuthnSettings.rpNameMaxLength) characters without control characters") }
        return entry.value
    }

    /// Each origin's own shape here; whether it is on the RP ID is `checkOrigins`', once both keys are known.
    func origins() throws(ConfigError) -> [String]? {
        guard !entry.value.isEmpty else { return nil }
        let origins = entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard origins.count <= 32 else { throw failure(.outOfRange, expected: "at most 32 origins") }
        for origin in origins where WebAuthnSettings.originProblem(origin, rpID: "localhost") != nil
            && WebAuthnSettings.originProblem(origin, rpID: Self.host(of: origin)) != nil {
            throw failure(.invalidValue, expected: "origins such as https://roster.example.org or http://localhost:8080 "
                          + "(\(ConfigError.quote(origin)) is not one)")
        }
        var unique: [String] = []
        for origin in origins where !unique.contains(origin) { unique.append(origin) }
        return unique
    }

    /// The host part of an origin, for judging its shape before the RP ID is known.
    private static func host(of origin: String) -> String {
        let rest = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first ?? ""
        if let colon = rest.lastIndex(of: ":") { return String(rest[..<colon]) }
        return String(rest)
    }

    /// An empty `Preset=` means the default, `seed`, like any other reset.
    func preset() throws(ConfigError) -> Policy.Preset {
        guard !entry.value.isEmpty else { return .seed }
        guard let preset = Policy.Preset(rawValue: entry.value) else {
            let names = Policy.Preset.allCases.map(\.rawValue).joined(separator: " or ")
            throw failure(.invalidValue, expected: names)
        }
        return preset
    }
}
