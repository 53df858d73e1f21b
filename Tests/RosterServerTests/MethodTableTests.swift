import RosterCore
import RosterProtocol
import Testing
@testable import RosterServer

@Suite("A method group's table")
struct MethodTableTests {
    @Test func theBoundMethodsServeWithTheGroupAndDoNotKeepItAlive() throws {
        var group: ProbeGroup? = ProbeGroup()
        weak var watched = group
        let methods = try #require(group).methods
        #expect(methods.map(\.spec.name) == ["probe.echo", "probe.whoami", "probe.login"])
        #expect(methods.map(\.dependence) == [.none, .identity, .identity])
        let host = LineHost()
        methods[1].serve(RequestCall(id: .int(1), params: try Params(validating: [], against: []), connection: host))
        #expect(watched?.served == ["whoami"])
        group = nil
        #expect(watched == nil, "the dispatcher's table holds no group")
    }
}
