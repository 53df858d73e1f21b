// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Roster",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "rosterd", targets: ["rosterd"]),
        .executable(name: "rosterctl", targets: ["rosterctl"]),
        .executable(name: "roster-bench", targets: ["roster-bench"]),
        .library(name: "RosterClient", targets: ["RosterClient"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSystemd", path: "Sources/CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CPWQuality", path: "Sources/CPWQuality", pkgConfig: "pwquality",
                       providers: [.apt(["libpwquality-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COATH", path: "Sources/COATH", pkgConfig: "liboath", providers: [.apt(["liboath-dev"])]),
        .systemLibrary(name: "CQRencode", path: "Sources/CQRencode", pkgConfig: "libqrencode",
                       providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "CFIDO2", path: "Sources/CFIDO2", pkgConfig: "libfido2",
                       providers: [.apt(["libfido2-dev", "libcbor-dev"])]),

        .target(name: "RosterCore", swiftSettings: exclusivityCheckedInDebugOnly),
        .target(name: "RosterProtocol", dependencies: ["RosterCore"]),
        // The process's environment and whole small files: the I/O that RosterProtocol and RosterCore must not do.
        .target(name: "RosterHostIO"),
        .target(name: "RosterRuntime", dependencies: ["RosterCore", "CLinux"], swiftSettings: exclusivityCheckedInDebugOnly),
        .target(name: "RosterCrypto", dependencies: ["CSodium", "COATH"]),
        .target(name: "RosterStorage", dependencies: ["RosterCore", "RosterRuntime"]),
        // The WebAuthn relying party's checks, pure; libfido2 reads the CBOR and COSE keys and checks signatures.
        .target(name: "RosterWebAuthn", dependencies: ["CFIDO2", "RosterCrypto", "RosterProtocol"]),
        .target(name: "RosterSQLite", dependencies: ["RosterCore", "RosterRuntime", "RosterStorage", "CSQLite", "CLinux"],
                swiftSettings: exclusivityCheckedInDebugOnly),
        // The PostgreSQL backend, libpq driven by the loop.
        .target(name: "RosterPostgres", dependencies: ["RosterCore", "RosterRuntime", "RosterStorage", "CLibPQ", "CLinux"],
                swiftSettings: exclusivityCheckedInDebugOnly),
        .target(name: "RosterServer",
                dependencies: ["RosterCore", "RosterProtocol", "RosterRuntime", "RosterCrypto", "RosterStorage",
                               "RosterHostIO", "RosterWebAuthn", "CLinux", "CSystemd", "CPWQuality"],
                swiftSettings: exclusivityCheckedInDebugOnly),
        .target(name: "RosterClient", dependencies: ["RosterProtocol", "CLinux"]),
        // The composition root: the only target that links a storage backend into the daemon, and picks one.
        .executableTarget(name: "rosterd", dependencies: ["RosterServer", "RosterRuntime", "RosterProtocol", "RosterCore",
                                                         "RosterCrypto", "RosterStorage", "RosterSQLite", "RosterPostgres",
                                                         "RosterHostIO"]),
        // The whole request path on a real in-process server, over its own SQLite file.
        .executableTarget(name: "roster-fuzz", dependencies: ["RosterServer", "RosterRuntime", "RosterCore", "RosterCrypto",
                                                             "RosterStorage", "RosterSQLite"]),
        // Each parser of outside data as its own fuzz target, and the library both the fuzzer and the replay test run.
        .target(name: "RosterFuzzTargets", dependencies: ["RosterCore", "RosterProtocol", "RosterCrypto", "RosterPostgres",
                                                         "RosterWebAuthn", "RosterStorage"]),
        .executableTarget(name: "roster-fuzz-parsers", dependencies: ["RosterFuzzTargets"]),
        .executableTarget(name: "rosterctl", dependencies: ["RosterClient", "RosterProtocol", "RosterCore",
                                                           "RosterHostIO", "CLinux", "CQRencode"]),
        // The benchmark and its floor, a C echo server it runs in a child process.
        .target(name: "CRosterFloor"),
        .executableTarget(name: "roster-bench", dependencies: ["CRosterFloor", "RosterSQLite", "RosterCrypto", "RosterCore",
                                                               "CLinux", "RosterProtocol", "RosterHostIO", "RosterStorage",
                                                               "CLibPQ"]),

        .target(name: "RosterTestSupport", path: "Tests/RosterTestSupport"),
        // The fake storage other targets' tests run on (form runners on a ManualScheduler).
        .target(name: "RosterStorageTesting", dependencies: ["RosterStorage", "RosterRuntime", "RosterCore"],
                path: "Tests/RosterStorageTesting"),
        // A throwaway PostgreSQL server (Debian's, run as the postgres user) for every test that needs one.
        .target(name: "RosterPostgresTesting", dependencies: ["RosterRuntime"], path: "Tests/RosterPostgresTesting"),
        // A real mail system (msmtp relaying to a throwaway aiosmtpd server) and scratch directories for stand-in programs.
        .target(name: "RosterMailTesting", dependencies: ["RosterRuntime", "RosterTestSupport"], path: "Tests/RosterMailTesting"),
        .testTarget(name: "RosterPostgresTests", dependencies: ["RosterPostgres", "RosterPostgresTesting", "RosterStorage",
                                                              "RosterStorageTesting",
                                                              "RosterRuntime", "RosterCore", "CLibPQ"]),
        .testTarget(name: "RosterRuntimeTests", dependencies: ["RosterRuntime", "RosterCore", "RosterTestSupport",
                                                             "RosterMailTesting", "RosterHostIO", "CLinux"]),
        .testTarget(name: "RosterCoreTests", dependencies: ["RosterCore", "RosterTestSupport"]),
        .testTarget(name: "RosterProtocolTests", dependencies: ["RosterProtocol", "RosterCore", "RosterTestSupport"]),
        .testTarget(name: "RosterHostIOTests", dependencies: ["RosterHostIO"]),
        .testTarget(name: "RosterCryptoTests", dependencies: ["RosterCrypto", "CSodium"]),
        .testTarget(name: "RosterWebAuthnTests", dependencies: ["RosterWebAuthn", "RosterCrypto", "RosterProtocol",
                                                              "RosterTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "RosterSQLiteTests", dependencies: ["RosterSQLite", "RosterStorage", "RosterStorageTesting", "RosterRuntime",
                                                           "RosterCrypto", "RosterCore", "CSQLite"]),
        .testTarget(name: "RosterStorageContractTests",
                dependencies: ["RosterStorageTesting", "RosterStorage", "RosterSQLite", "RosterPostgres",
                               "RosterPostgresTesting", "RosterRuntime", "RosterCore", "RosterTestSupport"]),
        .testTarget(name: "RosterServerTests", dependencies: ["RosterServer", "RosterRuntime", "RosterStorage", "RosterCore",
                                                            "RosterCrypto", "RosterMailTesting",
                                                            "RosterTestSupport", "RosterStorageTesting", "RosterProtocol", "CLinux"]),
        // The real daemon over its socket, and rosterd's own pieces (options, paths, the copy's driver) as units.
        .testTarget(name: "rosterdTests", dependencies: ["rosterd", "RosterProtocol", "RosterSQLite", "RosterStorage",
                                                         "RosterCrypto", "RosterClient", "RosterCore",
                                                         "RosterPostgresTesting", "RosterMailTesting",
                                                         "RosterHostIO", "CLinux"]),
        .testTarget(name: "rosterctlTests", dependencies: ["rosterctl", "RosterClient", "RosterProtocol", "RosterCore",
                                                           "RosterTestSupport"]),
        .testTarget(name: "RosterClientTests", dependencies: ["RosterClient", "RosterProtocol"]),
        // README's package lists against the Makefile, and every cited section of protocol.md against its headings.
        .testTarget(name: "DocumentationTests", dependencies: ["RosterTestSupport"]),
        .testTarget(name: "roster-benchTests", dependencies: ["roster-bench", "RosterCore", "RosterRuntime"]),
        .testTarget(name: "RosterFuzzTargetsTests", dependencies: ["RosterFuzzTargets", "RosterTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

/// The runtime exclusivity checks on class properties were a tenth of a request's instructions in the
/// daemon's hot path. Debug builds, which every test runs (including the daemon they spawn), keep checking; the
/// release binary does not repeat the check at run time.
var exclusivityCheckedInDebugOnly: [SwiftSetting] {
    [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
}

