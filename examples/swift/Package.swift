// swift-tools-version:6.0
// A Swift program on the host that talks to rosterd through the RosterClient library of the Roster package.
// `swift build` here builds it (and the parts of Roster it needs); `.build/debug/roster-hello` runs it.
import PackageDescription

let package = Package(
    name: "RosterHello",
    dependencies: [.package(name: "Roster", path: "../..")],
    targets: [
        .executableTarget(name: "roster-hello", dependencies: [.product(name: "RosterClient", package: "Roster")]),
    ]
)
