import Testing
@testable import rosterd

@Suite("rosterd options and paths")
struct DaemonOptionsTests {
    @Test func parsesEveryOptionInBothSpellings() throws {
        let options = try DaemonOptions.parse(["--socket", "/s", "--database=/d", "--config", "/c", "--log-level=debug"])
        #expect(options.socketPath == "/s")
        #expect(options.databasePath == "/d")
        #expect(options.configPath == "/c")
        #expect(options.logLevel == .debug)
        #expect(options.mode == .serve)
        #expect(try DaemonOptions.parse(["--version"]).mode == .version)
        #expect(try DaemonOptions.parse(["-h"]).mode == .help)
    }

    @Test func usageErrorsAreReported() {
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--socket"]) }
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--bogus"]) }
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--log-level", "loud"]) }
    }

    @Test func pathsFollowTheContractOrder() throws {
        let root = try DaemonPaths.resolve(socketOption: nil, databaseOption: nil, environment: [:], isRoot: true)
        #expect(root == DaemonPaths(socket: "/run/roster/roster.sock", database: "/var/lib/roster/roster.db"))
        let user = try DaemonPaths.resolve(socketOption: nil, databaseOption: nil,
                                           environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/a"], isRoot: false)
        #expect(user == DaemonPaths(socket: "/run/user/1000/roster/roster.sock", database: "/home/a/.local/state/roster/roster.db"))
        let xdg = try DaemonPaths.resolve(socketOption: nil, databaseOption: nil,
                                          environment: ["XDG_RUNTIME_DIR": "/r", "XDG_STATE_HOME": "/st"], isRoot: false)
        #expect(xdg.database == "/st/roster/roster.db")
        let systemd = try DaemonPaths.resolve(socketOption: nil, databaseOption: nil,
                                              environment: ["RUNTIME_DIRECTORY": "/run/roster", "STATE_DIRECTORY": "/var/lib/roster"], isRoot: false)
        #expect(systemd == DaemonPaths(socket: "/run/roster/roster.sock", database: "/var/lib/roster/roster.db"))
        let env = try DaemonPaths.resolve(socketOption: nil, databaseOption: nil,
                                          environment: ["ROSTER_SOCKET": "/e.sock", "ROSTER_DATABASE": "/e.db"], isRoot: true)
        #expect(env == DaemonPaths(socket: "/e.sock", database: "/e.db"))
        let option = try DaemonPaths.resolve(socketOption: "/o.sock", databaseOption: "/o.db",
                                             environment: ["ROSTER_SOCKET": "/e.sock", "ROSTER_DATABASE": "/e.db"], isRoot: true)
        #expect(option == DaemonPaths(socket: "/o.sock", database: "/o.db"))
    }

    @Test func aUserWithoutRuntimeDirectoryIsToldWhatToDo() {
        #expect(throws: DaemonPaths.Unresolvable.self) {
            try DaemonPaths.resolve(socketOption: nil, databaseOption: nil, environment: ["HOME": "/h"], isRoot: false)
        }
    }

    @Test func checkConfigAndBackupAreModes() throws {
        #expect(try DaemonOptions.parse(["--check-config"]).mode == .checkConfig)
        #expect(try DaemonOptions.parse(["--backup", "/b.db"]).mode == .backup("/b.db"))
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--backup"]) }
    }
}
