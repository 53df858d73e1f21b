import RosterProtocol
import Testing
@testable import rosterctl

@Suite("rosterctl command line")
struct CommandLineTests {
    @Test func globalOptionsComeBeforeTheVerb() throws {
        let (options, words) = try parseCommandLine(["--socket", "/s", "--json=pretty", "call", "session.hello", "{}"])
        #expect(options.socketPath == "/s")
        #expect(options.json == .pretty)
        #expect(words == ["call", "session.hello", "{}"])
    }

    @Test func bareJsonMeansShort() throws {
        #expect(try parseCommandLine(["--json", "call", "x"]).0.json == .short)
    }

    @Test func usageMistakesAreUsageErrors() {
        #expect(throws: UsageError.self) { try parseCommandLine(["--json=loud", "call"]) }
        #expect(throws: UsageError.self) { try parseCommandLine(["--frobnicate"]) }
        #expect(throws: UsageError.self) { try parseCommandLine(["--socket"]) }
    }

    @Test func callTakesAMethodAndOptionalJSONParams() throws {
        let call = try CallVerb(arguments: ["session.hello", "{\"locale\":\"en\"}"])
        #expect(call.method == "session.hello")
        #expect(call.params == ["locale": "en"])
        #expect(try CallVerb(arguments: ["session.whoami"]).params == [:])
        #expect(throws: UsageError.self) { try CallVerb(arguments: []) }
        #expect(throws: UsageError.self) { try CallVerb(arguments: ["m", "{nope"]) }
        #expect(throws: UsageError.self) { try CallVerb(arguments: ["m", "{}", "extra"]) }
    }

    @Test func prettyJSONIsIndented() {
        #expect(JSONWriter.prettyString(["a": [1, 2], "b": [:]]) == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}")
    }
}
