import Testing
@testable import RosterCore

@Suite("DaemonConfig")
struct ConfigDaemonConfigTests {
    static let main = "/etc/roster/rosterd.conf"
    static let dropIn = "/etc/roster/rosterd.conf.d/50-local.conf"

    func parse(_ text: String) throws(ConfigError) -> DaemonConfig {
        try DaemonConfig.parse(files: [(path: Self.main, text: text)])
    }

    func failure(_ files: [(path: String, text: String)]) -> ConfigError? {
        do {
            _ = try DaemonConfig.parse(files: files)
            return nil
        } catch {
            return error
        }
    }

    func failure(_ text: String) -> ConfigError? { failure([(path: Self.main, text: text)]) }

    // MARK: defaults and presets

    @Test func noFilesGiveTheContractDefaults() throws {
        let config = try DaemonConfig.parse(files: [])
        #expect(config == DaemonConfig())
        #expect(config.policy == Policy.seed)
        #expect(config.server == ServerSettings())
        #expect(try parse("# nothing but a comment\n[Server]\n") == DaemonConfig())
    }

    @Test func serverDefaults() {
        let server = ServerSettings()
        #expect(server.socketPath == nil)
        #expect(server.databasePath == nil)
        #expect(server.logLevel == .info)
        #expect(server.maxLineBytes == 65_536)
        #expect(server.maxConnections == 4096)
        #expect(server.maxConnectionsPerUID == 1024)
        #expect(server.idleLineTimeout == .seconds(60))
        #expect(server.outputSoftLimitBytes == 8 * 1024 * 1024)
        #expect(server.outputHardLimitBytes == 32 * 1024 * 1024)
        #expect(server.outputStallTimeout == .seconds(60))
        #expect(server.outputPauseBytes == 1024 * 1024)
        #expect(server.outputResumeBytes == 256 * 1024)
        #expect(server.maxRequestsInFlight == 64)
        #expect(server.outputBudgetBytes == 256 * 1024 * 1024)
        #expect(server.outputBudgetPerUIDBytes == 64 * 1024 * 1024)
        #expect(server.hashWorkers == 0)
        #expect(server.hashQueueLimit == 64)
    }

    @Test func presetsAreConsistentWithTheirOwnRanges() {
        for preset in Policy.Preset.allCases {
            let policy = Policy.preset(preset)
            #expect(policy.usernameMinLength <= policy.usernameMaxLength)
            #expect(policy.passwordMinLength <= policy.passwordMaxLength)
            #expect(ConfigKey.usernameLengthsRange.contains(policy.usernameMaxLength))
            #expect(ConfigKey.passwordLengthsRange.contains(policy.passwordMaxLength))
            #expect(ConfigKey.memoryKiBRange.contains(policy.hashMemoryKiB))
            #expect(ConfigKey.sessionIdleRange.contains(policy.sessionIdle))
        }
    }

    @Test func presetSelectsTheBase() throws {
        #expect(try parse("[Validation]\nPreset=hardened\n").policy == .hardened)
        #expect(try parse("[Validation]\nPreset=seed\n").policy == .seed)
        #expect(try parse("[Validation]\nPreset=\n").policy == .seed)
    }

    @Test func explicitKeysOverrideThePresetWhereverThePresetIs() throws {
        var expected = Policy.hardened
        expected.passwordMinLength = 20
        #expect(try parse("[Validation]\nPasswordMinLength=20\nPreset=hardened\n").policy == expected)
        #expect(try parse("[Validation]\nPreset=hardened\nPasswordMinLength=20\n").policy == expected)
        // The preset in a later file still does not undo an earlier file's explicit key.
        let config = try DaemonConfig.parse(files: [
            (path: Self.main, text: "[Validation]\nPasswordMinLength=20\n"),
            (path: Self.dropIn, text: "[Validation]\nPreset=hardened\n"),
        ])
        #expect(config.policy == expected)
    }

    @Test func lastPresetWins() throws {
        let config = try DaemonConfig.parse(files: [
            (path: Self.main, text: "[Validation]\nPreset=hardened\n"),
            (path: Self.dropIn, text: "[Validation]\nPreset=seed\n"),
        ])
        #expect(config.policy == .seed)
    }

    // MARK: every key

    @Test func everyKeyIsParsed() throws {
        let text = """
        [Validation]
        Preset=hardened
        UsernameMinLength=3
        UsernameMaxLength=32
        PasswordMinLength=12
        PasswordMaxLength=200
        UsernameForbiddenCharacters=<>
        PasswordForbiddenCharacters=
        PasswordNFKC=no
        PasswordQualityCheck=off

        [Timing]
        DebounceMs=250
        ThrottleMs=0

        [Login]
        RevealUnknownUsers=yes
        RateLimitBurst=5
        RateLimitIntervalSec=1min
        SessionIdleSec=1h 30min
        MaxSessionsPerUser=50

        [Hashing]
        MemoryKiB=65536
        Iterations=3
        Workers=4
        QueueLimit=128

        [Server]
        Socket=/run/roster/test.sock
        Database=/var/lib/roster/test.db
        LogLevel=debug
        MaxLineBytes=128K
        MaxSessionLineBytes=4M
        MaxConnections=100
        MaxConnectionsPerUser=10
        IdleLineTimeoutSec=30
        OutputSoftLimitBytes=1M
        OutputHardLimitBytes=4M
        OutputStallTimeoutSec=500ms
        StorageWorkers=3
        MaxQueuedJobs=500
        MaxQueuedJobsPerUser=20
        MaxQueuedJobsPerConnection=5
        MaxQueuedImportBytes=8M
        MaxQueuedImportBytesPerUser=2M
        OutputPauseBytes=512K
        OutputResumeBytes=128K
        MaxRequestsInFlight=16
        OutputBudgetBytes=1G
        OutputBudgetPerUserBytes=100M
        GatewayUsers=www-data 1001

        [Storage]
        Backend=postgresql

        [PostgreSQL]
        Connection=host=/run/postgresql dbname=roster2
        Connections=8
        StatementTimeoutSec=1.5s

        [Secrets]
        KeyFile=/etc/roster/roster.key

        [Audit]
        RetentionDays=30
        MaxFollowers=4
        FailedLoginEntriesPerMinute=25

        [Mail]
        Sendmail=/usr/sbin/sendmail
        From=accounts@example.org
        BaseURL=https://roster.example.org/
        CodeMinutes=30

        [WebAuthn]
        RPID=roster.example.org
        RPName=Roster at Example
        Origins=https://roster.example.org https://eu.roster.example.org:8443 https://roster.example.org
        """
        let expected = DaemonConfig(
            policy: Policy(
                preset: .hardened,
                usernameMinLength: 3, usernameMaxLength: 32,
                passwordMinLength: 12, passwordMaxLength: 200,
                usernameForbiddenCharacters: ["<", ">"], passwordForbiddenCharacters: [],
                passwordNFKC: false, passwordQualityCheck: false,
                debounce: .milliseconds(250), throttle: .zero,
                revealUnknownUsers: true, rateLimitBurst: 5, rateLimitInterval: .seconds(60),
                sessionIdle: .seconds(5400), maxSessionsPerUser: 50,
                hashMemoryKiB: 65_536, hashIterations: 3),
            server: ServerSettings(
                socketPath: "/run/roster/test.sock", databasePath: "/var/lib/roster/test.db",
                logLevel: .debug, maxLineBytes: 131_072, maxSessionLineBytes: 4 << 20, maxConnections: 100, maxConnectionsPerUID: 10,
                idleLineTimeout: .seconds(30), outputSoftLimitBytes: 1 << 20, outputHardLimitBytes: 4 << 20,
                outputStallTimeout: .milliseconds(500), outputPauseBytes: 512 << 10, outputResumeBytes: 128 << 10,
                maxRequestsInFlight: 16, outputBudgetBytes: 1 << 30, outputBudgetPerUIDBytes: 100 << 20,
                hashWorkers: 4, hashQueueLimit: 128,
                storageWorkers: 3, maxQueuedJobs: 500, maxQueuedJobsPerUser: 20, maxQueuedJobsPerConnection: 5,
                maxQueuedImportBytes: 8 << 20, maxQueuedImportBytesPerUser: 2 << 20,
                gatewayUsers: [.name("www-data"), .uid(1001)]),
            storage: StorageSettings(backend: .postgresql, postgresqlConnection: "host=/run/postgresql dbname=roster2",
                                     postgresqlConnections: 8, postgresqlStatementTimeout: .milliseconds(1_500),
                                     keyFilePath: "/etc/roster/roster.key"),
            audit: AuditSettings(retentionDays: 30, maxFollowers: 4, failedLoginEntriesPerMinute: 25),
            mail: MailSettings(sendmail: "/usr/sbin/sendmail", from: try MailMailbox(parsing: "accounts@example.org"),
                               baseURL: try MailBaseURL(parsing: "https://roster.example.org"), codeMinutes: 30),
            webAuthn: WebAuthnSettings(rpID: "roster.example.org", rpName: "Roster at Example",
                                       origins: ["https://roster.example.org", "https://eu.roster.example.org:8443"]))
        #expect(try parse(text) == expected)
        // Every key the parser knows appears above, so a new Policy field without a key fails here.
        let written = Set(text.split(separator: "\n").compactMap { $0.split(separator: "=").first.map(String.init) })
        #expect(Set(ConfigKey.allCases.map(\.name)).isSubset(of: written))
    }

    @Test func webAuthnDefaultsAndOriginsMustBeOnTheRPID() throws {
        #expect(try parse("").webAuthn == WebAuthnSettings())
        #expect(WebAuthnSettings().origins == ["http://localhost:8080", "http://127.0.0.1:8080"])
        #expect(try parse("[WebAuthn]\nOrigins=http://localhost:9000 http://[::1]:9000\n").webAuthn.origins
                == ["http://localhost:9000", "http://[::1]:9000"])
        // The RP ID changed, the default origins did not: they are on localhost, so the file is refused.
        #expect(failure("[WebAuthn]\nRPID=example.org\n")?.detail
                == "Origins= 'http://localhost:8080' is not on RPID=example.org or a name under it")
        #expect(failure("[WebAuthn]\nRPID=example.org\nOrigins=https://evil.org\n")?.detail
                == "Origins= 'https://evil.org' is not on RPID=example.org or a name under it")
        #expect(try parse("[WebAuthn]\nRPID=example.org\nOrigins=https://a.example.org\n").webAuthn.rpID == "example.org")
        for bad in ["Example.org", "exa mple.org", "-a.org", "a..org", "https://a.org", "a.org:80", "ünï.org"] {
            #expect(failure("[WebAuthn]\nRPID=\(bad)\n")?.reason == "invalid_value", "\(bad)")
        }
        for bad in ["localhost:8080", "ftp://localhost", "http://localhost/", "http://localhost:0", "http://localhost:65536",
                    "http://localhost:08080", "http://", "http://[::1]x"] {
            #expect(failure("[WebAuthn]\nOrigins=\(bad)\n")?.reason == "invalid_value", "\(bad)")
        }
        #expect(failure("[WebAuthn]\nRPName=\(String(repeating: "x", count: 65))\n")?.reason == "invalid_value")
        #expect(try parse("[WebAuthn]\nRPName=\n").webAuthn.rpName == "Roster")
    }

    @Test func forbiddenCharactersAsWrittenOrQuoted() throws {
        let config = try parse("[Validation]\nUsernameForbiddenCharacters=!@#$%^&*();=\nPasswordForbiddenCharacters=\" x \"\n")
        #expect(config.policy.usernameForbiddenCharacters.characters == Set("!@#$%^&*();="))
        #expect(config.policy.passwordForbiddenCharacters.characters == [" ", "x"])
    }

    @Test func booleansInEverySpelling() throws {
        for (text, value) in [("1", true), ("YES", true), ("t", true), ("On", true), ("0", false), ("No", false),
                              ("F", false), ("off", false)] {
            #expect(try parse("[Validation]\nPasswordNFKC=\(text)\n").policy.passwordNFKC == value)
            #expect(try parse("[Login]\nRevealUnknownUsers=\(text)\n").policy.revealUnknownUsers == value)
        }
    }

    @Test func logLevelByNameOrNumber() throws {
        #expect(try parse("[Server]\nLogLevel=3\n").server.logLevel == .err)
        #expect(try parse("[Server]\nLogLevel=warning\n").server.logLevel == .warning)
    }

    @Test func timeSpansInTimeKeys() throws {
        #expect(try parse("[Login]\nRateLimitIntervalSec=300\n").policy.rateLimitInterval == .seconds(300))
        #expect(try parse("[Login]\nRateLimitIntervalSec=5min\n").policy.rateLimitInterval == .seconds(300))
        #expect(try parse("[Login]\nSessionIdleSec=2d\n").policy.sessionIdle == .seconds(172_800))
        #expect(try parse("[Server]\nIdleLineTimeoutSec=1.5s\n").server.idleLineTimeout == .milliseconds(1500))
    }

    @Test func continuedValue() throws {
        #expect(try parse("[Login]\nSessionIdleSec=1h \\\n  30min\n").policy.sessionIdle == .seconds(5400))
    }

    @Test func emptyAssignmentResetsToThePresetDefault() throws {
        let config = try DaemonConfig.parse(files: [
            (path: Self.main, text: "[Validation]\nPreset=hardened\nPasswordMinLength=20\n[Server]\nSocket=/run/a.sock\nLogLevel=debug\n"),
            (path: Self.dropIn, text: "[Validation]\nPasswordMinLength=\n[Server]\nSocket=\nLogLevel=\n"),
        ])
        #expect(config.policy == .hardened)
        #expect(config.server == ServerSettings())
    }

    // MARK: file order

    @Test func laterFilesOverrideKeyByKey() throws {
        let config = try DaemonConfig.parse(files: [
            (path: "/usr/lib/roster/rosterd.conf.d/10-vendor.conf",
             text: "[Timing]\nDebounceMs=100\nThrottleMs=100\n[Server]\nLogLevel=debug\n"),
            (path: Self.main, text: "[Timing]\nDebounceMs=200\n"),
            (path: Self.dropIn, text: "[Timing]\nDebounceMs=300\nDebounceMs=400\n"),
        ])
        #expect(config.policy.debounce == .milliseconds(400))
        #expect(config.policy.throttle == .milliseconds(100))
        #expect(config.server.logLevel == .debug)
    }

    // MARK: errors, each with its exact path and line

    @Test func unknownSection() {
        let error = failure([(path: Self.main, text: "[Timing]\nDebounceMs=1\n"),
                             (path: Self.dropIn, text: "# x\n\n[Network]\n")])
        #expect(error == ConfigError(kind: .unknownSection, path: Self.dropIn, line: 3,
                                     detail: "unknown section [Network]; known sections are [Validation], [Timing], [Login], [Hashing], [Server], [Storage], [PostgreSQL], [Secrets], [Audit], [Mail], [WebAuthn]"))
        #expect(error?.reason == "unknown_section")
        #expect(failure("[timing]\nDebounceMs=1\n")?.detail
                == "unknown section [timing] (names are case-sensitive: did you mean [Timing]?)")
    }

    @Test func unknownKey() {
        let error = failure("[Timing]\nDebounceMs=1\nBounce=2\n")
        #expect(error?.reason == "unknown_key")
        #expect(error?.path == Self.main)
        #expect(error?.line == 3)
        #expect(error?.description == "\(Self.main):3: unknown_key: unknown key Bounce= in [Timing]; known keys are DebounceMs, ThrottleMs")
        #expect(failure("[Server]\nDebounceMs=1\n")?.detail == "unknown key DebounceMs= in [Server] (it belongs in [Timing])")
        #expect(failure("[Timing]\ndebouncems=1\n")?.detail
                == "unknown key debouncems= in [Timing] (keys are case-sensitive: did you mean DebounceMs= in [Timing]?)")
    }

    @Test func invalidValueMessageNamesKeyAndExpectation() {
        let error = failure("[Timing]\nDebounceMs=abc\n")
        #expect(error?.description
                == "\(Self.main):2: invalid_value: DebounceMs= expects a whole number of milliseconds from 0 to 10000, got 'abc'")
    }

    @Test func outOfRangeMessage() {
        let error = failure("[Timing]\n\nThrottleMs=10001\n")
        #expect(error?.description
                == "\(Self.main):3: out_of_range: ThrottleMs= expects a whole number of milliseconds from 0 to 10000, got '10001'")
    }

    @Test(arguments: [
        ("[Validation]\nPreset=paranoid\n", "invalid_value"),
        ("[Validation]\nUsernameMinLength=0\n", "out_of_range"),
        ("[Validation]\nUsernameMaxLength=257\n", "out_of_range"),
        ("[Validation]\nPasswordMaxLength=-1\n", "invalid_value"),
        ("[Validation]\nPasswordMinLength=six\n", "invalid_value"),
        ("[Validation]\nPasswordNFKC=maybe\n", "invalid_value"),
        ("[Validation]\nPasswordQualityCheck=2\n", "invalid_value"),
        ("[Timing]\nDebounceMs=500ms\n", "invalid_value"),
        ("[Timing]\nDebounceMs=99999999999999999999999\n", "out_of_range"),
        ("[Login]\nRevealUnknownUsers=sometimes\n", "invalid_value"),
        ("[Login]\nRateLimitBurst=0\n", "out_of_range"),
        ("[Login]\nRateLimitIntervalSec=0\n", "out_of_range"),
        ("[Login]\nRateLimitIntervalSec=8d\n", "out_of_range"),
        ("[Login]\nRateLimitIntervalSec=soon\n", "invalid_value"),
        ("[Login]\nSessionIdleSec=999999999999w\n", "out_of_range"),
        ("[Hashing]\nMemoryKiB=7\n", "out_of_range"),
        ("[Hashing]\nMemoryKiB=4194305\n", "out_of_range"),
        ("[Hashing]\nMemoryKiB=19M\n", "invalid_value"),
        ("[Hashing]\nIterations=0\n", "out_of_range"),
        ("[Hashing]\nIterations=101\n", "out_of_range"),
        ("[Hashing]\nWorkers=1025\n", "out_of_range"),
        ("[Hashing]\nQueueLimit=0\n", "out_of_range"),
        ("[Server]\nSocket=relative.sock\n", "invalid_value"),
        ("[Server]\nSocket=/run/roster/\n", "invalid_value"),
        ("[Server]\nSocket=/" + String(repeating: "s", count: 107) + "\n", "out_of_range"),
        ("[Server]\nDatabase=~/roster.db\n", "invalid_value"),
        ("[Server]\nLogLevel=loud\n", "invalid_value"),
        ("[Server]\nLogLevel=8\n", "invalid_value"),
        ("[Server]\nMaxLineBytes=1023\n", "out_of_range"),
        ("[Server]\nMaxLineBytes=17M\n", "out_of_range"),
        ("[Server]\nMaxLineBytes=64k\n", "invalid_value"),
        ("[Server]\nMaxConnections=0\n", "out_of_range"),
        ("[Server]\nMaxConnectionsPerUser=0\n", "out_of_range"),
        ("[Server]\nIdleLineTimeoutSec=0\n", "out_of_range"),
        ("[Server]\nIdleLineTimeoutSec=2d\n", "out_of_range"),
        ("[Server]\nOutputSoftLimitBytes=2G\n", "out_of_range"),
        ("[Server]\nOutputHardLimitBytes=lots\n", "invalid_value"),
        ("[Server]\nOutputStallTimeoutSec=forever\n", "invalid_value"),
        ("[Server]\nOutputPauseBytes=2G\n", "out_of_range"),
        ("[Server]\nOutputResumeBytes=0\n", "out_of_range"),
        ("[Server]\nMaxRequestsInFlight=0\n", "out_of_range"),
        ("[Server]\nOutputBudgetBytes=32K\n", "out_of_range"),
        ("[Server]\nOutputBudgetPerUserBytes=65G\n", "out_of_range"),
    ])
    func badValues(text: String, reason: String) {
        let error = failure(text)
        #expect(error?.reason == reason)
        #expect(error?.path == Self.main)
        #expect(error?.line == 2)
        let key = text.split(separator: "\n")[1].split(separator: "=")[0]
        #expect(error?.detail.hasPrefix("\(key)= expects ") == true)
    }

    @Test func socketPathAtTheSunPathLimitIsAccepted() throws {
        let path = "/" + String(repeating: "s", count: 106)
        #expect(try parse("[Server]\nSocket=\(path)\n").server.socketPath == path)
    }

    @Test func syntaxErrorCarriesPathAndLine() {
        let error = failure([(path: Self.main, text: "[Timing]\nDebounceMs=1\n"),
                             (path: Self.dropIn, text: "[Timing]\nThrottleMs=1\nnonsense\n")])
        #expect(error?.reason == "syntax")
        #expect(error?.path == Self.dropIn)
        #expect(error?.line == 3)
    }

    @Test func theFirstProblemInReadingOrderIsReported() {
        // The bad value on line 2 comes before the malformed line 3.
        let error = failure("[Timing]\nDebounceMs=x\nnonsense\n")
        #expect(error?.reason == "invalid_value")
        #expect(error?.line == 2)
        // A value that a later file would override is still refused: the file itself is bad.
        let overridden = failure([(path: Self.main, text: "[Timing]\nDebounceMs=x\n"),
                                  (path: Self.dropIn, text: "[Timing]\nDebounceMs=5\n")])
        #expect(overridden?.path == Self.main)
    }

    // MARK: minimum and maximum

    @Test func minimumAboveMaximumBlamesTheLaterKey() {
        let laterMax = failure("[Validation]\nPasswordMinLength=20\nPasswordMaxLength=16\n")
        #expect(laterMax?.description
                == "\(Self.main):3: out_of_range: PasswordMaxLength= must not be less than PasswordMinLength= (20), got 16")
        let laterMin = failure("[Validation]\nUsernameMaxLength=10\nUsernameMinLength=12\n")
        #expect(laterMin?.description
                == "\(Self.main):3: out_of_range: UsernameMinLength= must not be greater than UsernameMaxLength= (10), got 12")
        let acrossFiles = failure([(path: Self.main, text: "[Validation]\nUsernameMinLength=12\n"),
                                   (path: Self.dropIn, text: "\n[Validation]\nUsernameMaxLength=10\n")])
        #expect(acrossFiles?.path == Self.dropIn)
        #expect(acrossFiles?.line == 3)
        #expect(acrossFiles?.reason == "out_of_range")
    }

    @Test func minimumAboveThePresetMaximumBlamesTheOnlyExplicitKey() {
        // The hardened preset's minimum (15) is not written anywhere, so the written maximum is blamed.
        let error = failure("[Validation]\nPasswordMaxLength=10\n\n[Validation]\nPreset=hardened\n")
        #expect(error?.line == 2)
        #expect(error?.detail == "PasswordMaxLength= must not be less than PasswordMinLength= (15), got 10")
    }

    @Test func equalMinimumAndMaximumAreFine() throws {
        let config = try parse("[Validation]\nUsernameMinLength=8\nUsernameMaxLength=8\n")
        #expect(config.policy.usernameMinLength == 8)
        #expect(config.policy.usernameMaxLength == 8)
    }

    @Test func outputSoftLimitAboveHardLimit() {
        let error = failure("[Server]\nOutputHardLimitBytes=4M\n")
        #expect(error?.description
                == "\(Self.main):2: out_of_range: OutputHardLimitBytes= must not be less than OutputSoftLimitBytes= (8M), got 4M")
    }

    @Test func backPressureMarksInOrder() {
        #expect(failure("[Server]\nOutputPauseBytes=128K\n")?.detail
                == "OutputPauseBytes= must not be less than OutputResumeBytes= (256K), got 128K")
        #expect(failure("[Server]\nOutputBudgetPerUserBytes=1G\n")?.detail
                == "OutputBudgetPerUserBytes= must not be greater than OutputBudgetBytes= (256M), got 1G")
    }

    /// The marks in force stay below the limits they would otherwise pass, whatever was configured.
    @Test func effectiveMarksStayUnderTheLimits() throws {
        let small = try parse("[Server]\nOutputSoftLimitBytes=64K\nOutputHardLimitBytes=256K\n").server
        #expect(small.readPauseBytes == 64 << 10)
        #expect(small.readResumeBytes == 32 << 10)
        #expect(small.maxAnswerBytes == 128 << 10)
        let defaults = ServerSettings()
        #expect(defaults.readPauseBytes == 1 << 20)
        #expect(defaults.readResumeBytes == 256 << 10)
        #expect(defaults.maxAnswerBytes == 16 << 20)
    }

    @Test func everyReasonIsCovered() {
        #expect(ConfigError.Kind.allCases.map(\.rawValue)
                == ["syntax", "unknown_section", "unknown_key", "invalid_value", "out_of_range"])
    }

    // MARK: storage (issue 14)

    @Test func storageDefaultsToSQLiteAndTheLocalPostgreSQL() throws {
        let storage = try DaemonConfig.parse(files: []).storage
        #expect(storage == StorageSettings(backend: .sqlite, postgresqlConnection: "host=/run/postgresql dbname=roster",
                                           postgresqlConnections: 4))
    }

    @Test func storageKeysAreReadAndAnEmptyOneResets() throws {
        let text = "[Storage]\nBackend=postgresql\n[PostgreSQL]\nConnection=host=/tmp/pg dbname=r user=roster\nConnections=64\n"
        let storage = try parse(text).storage
        #expect(storage == StorageSettings(backend: .postgresql, postgresqlConnection: "host=/tmp/pg dbname=r user=roster",
                                           postgresqlConnections: 64))
        let reset = try DaemonConfig.parse(files: [(path: Self.main, text: text),
                                                   (path: Self.dropIn, text: "[Storage]\nBackend=\n[PostgreSQL]\nConnection=\nConnections=\n")])
        #expect(reset.storage == StorageSettings())
    }

    @Test func badStorageValuesAreRefusedWithPathLineAndReason() throws {
        #expect(failure("[Storage]\nBackend=mysql\n")?.description
                == "\(Self.main):2: invalid_value: Backend= expects sqlite or postgresql, got 'mysql'")
        #expect(failure("[PostgreSQL]\n\nConnections=0\n")?.description
                == "\(Self.main):3: out_of_range: Connections= expects a whole number of connections from 1 to 64, got '0'")
        #expect(failure("[PostgreSQL]\nConnections=65\n")?.reason == "out_of_range")
        #expect(failure("[PostgreSQL]\nConnections=four\n")?.reason == "invalid_value")
        #expect(failure("[PostgreSQL]\nStatementTimeoutSec=50ms\n")?.reason == "out_of_range")
        #expect(failure("[PostgreSQL]\nStatementTimeoutSec=11min\n")?.reason == "out_of_range")
        #expect(try parse("[PostgreSQL]\nStatementTimeoutSec=100ms\n").storage.postgresqlStatementTimeout == .milliseconds(100))
        #expect(try parse("").storage.postgresqlStatementTimeout == .seconds(5))
        #expect(failure("[Storage]\nConnection=x\n")?.detail
                == "unknown key Connection= in [Storage] (it belongs in [PostgreSQL])")
    }

    /// A connection string is never echoed in a refusal: it may hold a password.
    @Test func aRefusedConnectionStringIsNotQuoted() {
        let error = failure("[PostgreSQL]\nConnection=password=s3cret\u{7}x\n")
        #expect(error?.reason == "invalid_value")
        #expect(error?.line == 2)
        #expect(error.map { !$0.description.contains("s3cret") } == true)
    }

    /// The storage keys name what was opened at start: a reload keeps them, says which it kept, and applies the rest.
    @Test func aReloadKeepsTheStorageInForceAndAppliesTheRest() throws {
        let running = try parse("[Storage]\nBackend=sqlite\n")
        let fresh = try parse("[Storage]\nBackend=postgresql\n[PostgreSQL]\nConnections=8\nStatementTimeoutSec=1s\n"
                              + "[Timing]\nDebounceMs=200\n")
        let (config, kept) = running.reloaded(from: fresh)
        #expect(config.storage == running.storage)
        #expect(config.policy.debounce == .milliseconds(200))
        #expect(kept == ["[Storage] Backend=", "[PostgreSQL] Connections=", "[PostgreSQL] StatementTimeoutSec="])
        #expect(running.reloaded(from: try parse("[Timing]\nDebounceMs=300\n")).kept == [])
    }

    // MARK: secrets (issue 15)

    @Test func theKeyFileIsAnAbsolutePathReadAtStartOnly() throws {
        #expect(try DaemonConfig.parse(files: []).storage.keyFilePath == nil)
        let text = "[Secrets]\nKeyFile=/srv/roster/roster.key\n"
        #expect(try parse(text).storage.keyFilePath == "/srv/roster/roster.key")
        let reset = try DaemonConfig.parse(files: [(path: Self.main, text: text), (path: Self.dropIn, text: "[Secrets]\nKeyFile=\n")])
        #expect(reset.storage.keyFilePath == nil)
        #expect(failure("[Secrets]\nKeyFile=roster.key\n")?.reason == "invalid_value")
        #expect(failure("[Secrets]\nKeyFile=/srv/roster/\n")?.reason == "invalid_value")
        #expect(failure("[Server]\nKeyFile=/srv/roster.key\n")?.detail
                == "unknown key KeyFile= in [Server] (it belongs in [Secrets])")
        // The key in force sealed what the daemon holds: a reload cannot swap it.
        let running = try parse(text)
        let (config, kept) = running.reloaded(from: try parse("[Secrets]\nKeyFile=/other.key\n"))
        #expect(config.storage.keyFilePath == "/srv/roster/roster.key")
        #expect(kept == ["[Secrets] KeyFile="])
    }

    // MARK: audit (issue 16)

    @Test func theAuditKeysHaveTheirDefaultsRangesAndAReloadAppliesThem() throws {
        #expect(try DaemonConfig.parse(files: []).audit == AuditSettings(retentionDays: 90, maxFollowers: 16))
        let text = "[Audit]\nRetentionDays=7\nMaxFollowers=2\n"
        #expect(try parse(text).audit == AuditSettings(retentionDays: 7, maxFollowers: 2))
        #expect(try parse("[Audit]\nRetentionDays=36500\nMaxFollowers=1\n").audit
                == AuditSettings(retentionDays: 36_500, maxFollowers: 1))
        let reset = try DaemonConfig.parse(files: [(path: Self.main, text: text),
                                                   (path: Self.dropIn, text: "[Audit]\nRetentionDays=\n")])
        #expect(reset.audit == AuditSettings(retentionDays: 90, maxFollowers: 2))
        for bad in ["RetentionDays=0", "RetentionDays=36501", "MaxFollowers=0"] {
            #expect(failure("[Audit]\n\(bad)\n")?.reason == "out_of_range", "\(bad)")
        }
        #expect(failure("[Audit]\nRetentionDays=90d\n")?.reason == "invalid_value")
        #expect(failure("[Audit]\nRetentionDays=ninety\n")?.detail
                == "RetentionDays= expects a whole number of days from 1 to 36500, got 'ninety'")
        #expect(failure("[Server]\nMaxFollowers=3\n")?.detail == "unknown key MaxFollowers= in [Server] (it belongs in [Audit])")
        let (config, kept) = try parse("").reloaded(from: try parse(text))
        #expect(config.audit == AuditSettings(retentionDays: 7, maxFollowers: 2))
        #expect(kept == [])
    }

    @Test func theRetentionCountsWholeDaysBackFromNow() {
        #expect(AuditSettings(retentionDays: 90).retainedSinceMs(nowMs: 100 * 86_400_000) == 10 * 86_400_000)
        #expect(AuditSettings(retentionDays: 1).retainedSinceMs(nowMs: 86_400_000) == 0)
    }

    @Test func failedLoginEntriesPerMinuteIsACountPerPeerThatAReloadApplies() throws {
        #expect(try DaemonConfig.parse(files: []).audit.failedLoginEntriesPerMinute == 10)
        let text = "[Audit]\nFailedLoginEntriesPerMinute=3\n"
        #expect(try parse(text).audit.failedLoginEntriesPerMinute == 3)
        let reset = try DaemonConfig.parse(files: [(path: Self.main, text: text),
                                                   (path: Self.dropIn, text: "[Audit]\nFailedLoginEntriesPerMinute=\n")])
        #expect(reset.audit.failedLoginEntriesPerMinute == 10)
        #expect(failure("[Audit]\nFailedLoginEntriesPerMinute=0\n")?.reason == "out_of_range")
        #expect(failure("[Audit]\nFailedLoginEntriesPerMinute=lots\n")?.reason == "invalid_value")
        let (config, kept) = try DaemonConfig().reloaded(from: parse(text))
        #expect(config.audit.failedLoginEntriesPerMinute == 3)
        #expect(kept == [])
    }

    @Test func gatewayUsersAreNamesOrUIDsThatAReloadApplies() throws {
        #expect(try DaemonConfig.parse(files: []).server.gatewayUsers == [.name("roster-web")])
        let text = "[Server]\nGatewayUsers=roster-web  1001\twww-data svc.gw_2 host$\n"
        #expect(try parse(text).server.gatewayUsers
                == [.name("roster-web"), .uid(1001), .name("www-data"), .name("svc.gw_2"), .name("host$")])
        let reset = try DaemonConfig.parse(files: [(path: Self.main, text: text),
                                                   (path: Self.dropIn, text: "[Server]\nGatewayUsers=\n")])
        #expect(reset.server.gatewayUsers == [.name("roster-web")])
        for bad in ["-rf", "a/b", "ro ster,web", "名前", "4294967295", "99999999999", String(repeating: "a", count: 33), "$"] {
            #expect(failure("[Server]\nGatewayUsers=\(bad)\n")?.reason == "invalid_value", "\(bad)")
        }
        #expect(failure("[Server]\nGatewayUsers=a/b\n")?.detail
                == "GatewayUsers= expects user names or numeric uids separated by blanks, got 'a/b'")
        let (config, kept) = try DaemonConfig().reloaded(from: parse("[Server]\nGatewayUsers=0 gw\n"))
        #expect(config.server.gatewayUsers == [.uid(0), .name("gw")])
        #expect(kept == [])
    }

    // MARK: mail

    @Test func mailIsOffByDefaultWithTheContractsDefaults() throws {
        let mail = try DaemonConfig.parse(files: []).mail
        #expect(mail == MailSettings(sendmail: nil, from: nil, baseURL: try MailBaseURL(parsing: "http://127.0.0.1:8080"),
                                     codeMinutes: 15))
        #expect(MailSettings.defaultBaseURL.text == "http://127.0.0.1:8080")
        #expect(!mail.enabled)
        #expect(mail.sender(hostName: "mail.example.org").description == "roster@mail.example.org")
        #expect(MailSettings.defaultFrom(hostName: "").description == "roster@localhost")
        #expect(MailSettings.defaultFrom(hostName: "bad host").description == "roster@localhost")
        #expect(MailSettings.defaultFrom(hostName: "-bad").description == "roster@localhost")
        #expect(MailSettings.defaultFrom(hostName: "") == MailMailbox(address: try MailAddress(parsing: "roster@localhost")))
        #expect(MailSettings.defaultFrom(hostName: "").address.domain == "localhost")
        #expect(MailSettings(from: try MailMailbox(parsing: "a@b.example")).sender(hostName: "h").description == "a@b.example")
        let composer = try mail.composer(hostName: "mail.example.org")
        #expect(composer.from.address.text == "roster@mail.example.org" && composer.codeMinutes == 15)
        #expect(composer.baseURL == MailSettings.defaultBaseURL)
        #expect(throws: MailMessageError.codeMinutesOutOfRange) {
            try MailSettings(codeMinutes: 0).composer(hostName: "h")
        }
    }

    @Test func theMailKeysAreReadAnEmptyOneResetsAndAReloadAppliesThem() throws {
        let text = "[Mail]\nSendmail=/usr/sbin/sendmail\nFrom=roster@example.org\nBaseURL=https://r.example.org/roster//\n"
            + "CodeMinutes=1440\n"
        let mail = try parse(text).mail
        #expect(mail == MailSettings(sendmail: "/usr/sbin/sendmail", from: try MailMailbox(parsing: "roster@example.org"),
                                     baseURL: try MailBaseURL(parsing: "https://r.example.org/roster"), codeMinutes: 1440))
        #expect(mail.baseURL.text == "https://r.example.org/roster")
        #expect(mail.enabled)
        #expect(try parse("[Mail]\nCodeMinutes=1\nBaseURL=http://[::1]:8080\n").mail
                == MailSettings(baseURL: try MailBaseURL(parsing: "http://[::1]:8080"), codeMinutes: 1))
        let reset = try DaemonConfig.parse(files: [(path: Self.main, text: text),
                                                   (path: Self.dropIn, text: "[Mail]\nSendmail=\nFrom=\nBaseURL=\n")])
        #expect(reset.mail == MailSettings(codeMinutes: 1440))
        let (config, kept) = try DaemonConfig().reloaded(from: parse(text))
        #expect(config.mail == mail)
        #expect(kept == [])
        #expect(failure("[Server]\nSendmail=/usr/sbin/sendmail\n")?.detail
                == "unknown key Sendmail= in [Server] (it belongs in [Mail])")
    }

    /// The sender is read by the mails' own parser, so a name to show is taken as the mails write it.
    @Test func theSenderMayCarryANameToShow() throws {
        let named = try parse("[Mail]\nFrom=Roster 名册 <roster@example.org>\n").mail.from
        #expect(named?.displayName == "Roster 名册" && named?.address.text == "roster@example.org")
        let quoted = try parse("[Mail]\nFrom=\"Roster <directory>\" <roster@example.org>\n").mail.from
        #expect(quoted?.displayName == "Roster <directory>")
    }

    @Test func badMailValuesAreRefusedWithPathLineAndReason() {
        #expect(failure("[Mail]\nSendmail=sendmail\n")?.description
                == "\(Self.main):2: invalid_value: Sendmail= expects an absolute path naming a file, got 'sendmail'")
        #expect(failure("[Mail]\nSendmail=/usr/sbin/\n")?.reason == "invalid_value")
        let expected = "From= expects a mail address such as roster@example.org or Roster <roster@example.org>"
        #expect(failure("[Mail]\nFrom=-oQ/tmp@example.org\n")?.description
                == "\(Self.main):2: invalid_value: \(expected) (this one starts with -), got '-oQ/tmp@example.org'")
        #expect(failure("[Mail]\nFrom=roster\n")?.detail
                == "\(expected) (this one is not of the form local@domain), got 'roster'")
        #expect(failure("[Mail]\nFrom=rö@example.org\n")?.detail == "\(expected) (this one is not ASCII), got 'rö@example.org'")
        #expect(failure("[Mail]\nFrom=Roster <roster@example.org\n")?.detail
                == "\(expected) (this one is neither an address nor Name <address>), got 'Roster <roster@example.org'")
        for bad in ["roster", "@example.org", "roster@", "a@b@c", "ro ster@example.org", "rö@example.org",
                    "a\u{7}@example.org", "a,b@example.org", "<roster@example.org", "Ro\"ster <a@b.example>"] {
            #expect(failure("[Mail]\nFrom=\(bad)\n")?.reason == "invalid_value", "\(bad)")
        }
        #expect(failure("[Mail]\nBaseURL=ftp://example.org\n")?.description
                == "\(Self.main):2: invalid_value: BaseURL= expects an http:// or https:// address such as "
                + "https://roster.example.org (this one does not start with http:// or https://), got 'ftp://example.org'")
        let baseURLProblems = ["http://example.org/?a=1": "holds a query or a fragment", "https:///path": "names no host",
                               "http://exa mple.org": "holds a blank, a control character, non-ASCII or one of "
                               + "\"<>\\^`{|} (percent-encode it)"]
        for (bad, problem) in baseURLProblems {
            #expect(failure("[Mail]\nBaseURL=\(bad)\n")?.detail.contains("(this one \(problem))") == true, "\(bad)")
        }
        for bad in ["example.org", "http://", "https:///path", "http://example.org/?a=1", "http://example.org/#x",
                    "http://exa mple.org", "http://例子.org"] {
            #expect(failure("[Mail]\nBaseURL=\(bad)\n")?.reason == "invalid_value", "\(bad)")
        }
        #expect(failure("[Mail]\nCodeMinutes=0\n")?.description
                == "\(Self.main):2: out_of_range: CodeMinutes= expects a whole number of minutes from 1 to 1440, got '0'")
        #expect(failure("[Mail]\nCodeMinutes=1441\n")?.reason == "out_of_range")
        #expect(failure("[Mail]\nCodeMinutes=15min\n")?.reason == "invalid_value")
    }

    /// What sendmail is given as FROM and RCPT: one argument each, never an option.
    @Test func anAddressIsRefusedAsAnArgumentOnlyForWhatCouldInject() {
        #expect(MailSettings.addressProblem("alice@example.com") == nil)
        #expect(MailSettings.addressProblem("用户@例子.广告") == nil)
        #expect(MailSettings.addressProblem("") == "is empty")
        #expect(MailSettings.addressProblem("-t") == "starts with -")
        for bad in ["a b@x", "a\tb@x", "a\nb@x", "a\rb@x", "a\u{0}@x", "a\u{85}@x", "a\u{a0}@x", "a\u{2028}@x",
                    "a\u{202e}@x", "a\u{feff}@x"] {
            #expect(MailSettings.addressProblem(bad) == "holds a blank or a control character", "\(bad.debugDescription)")
        }
    }
}
