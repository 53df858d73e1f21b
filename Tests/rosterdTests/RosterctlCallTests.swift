import Glibc
import RosterProtocol
import Testing

/// `rosterctl call` against the real daemon, as a script would use it.
@Suite("rosterctl call against rosterd", .serialized)
struct RosterctlCallTests {
    @Test func callPrintsTheResultAsJSON() throws {
        let daemon = try TestDaemon()
        let result = try capture([builtBinary("rosterctl"), "--socket", daemon.socketPath, "call", "session.hello", "{\"locale\":\"vi\"}"],
                                 in: daemon.directory)
        #expect(result.status == 0)
        let answer = try JSONParser.parse(Array(result.stdout.utf8.dropLast()))
        #expect(answer["locale"] == "vi")
        #expect(answer["server"] == "rosterd")
    }

    @Test func anErrorAnswerExitsOneWithTheMessage() throws {
        let daemon = try TestDaemon()
        let result = try capture([builtBinary("rosterctl"), "--socket", daemon.socketPath, "call", "no.such"], in: daemon.directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("method_not_found"))
    }

    @Test func aMissingDaemonIsNamedWithItsSocket() throws {
        let directory = try TemporaryDirectory()
        let socket = directory.path + "/nobody.sock"
        let result = try capture([builtBinary("rosterctl"), "--socket", socket, "call", "session.hello"], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("rosterd is not running"))
        #expect(result.stderr.contains(socket))
    }

    @Test func usageMistakesExitTwo() throws {
        let directory = try TemporaryDirectory()
        #expect(try capture([builtBinary("rosterctl"), "call"], in: directory).status == 2)
        #expect(try capture([builtBinary("rosterctl"), "frobnicate"], in: directory).status == 2)
        #expect(try capture([builtBinary("rosterctl"), "--version"], in: directory).status == 0)
    }
}
