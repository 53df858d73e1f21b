import Testing
@testable import RosterRuntime
@testable import RosterServer

@Suite("Where logs go")
struct LogDestinationTests {
    @Test func aTerminalOrTestGetsPlainLines() {
        let sink = LogDestination.sink(environment: [:])
        #expect((sink as? StderrSink)?.priorityPrefix == false)
    }

    @Test func aJournalStreamThatIsNotOurStderrIsIgnored() {
        #expect(LogDestination.sink(environment: ["JOURNAL_STREAM": "1:1"]) is StderrSink)
        #expect(LogDestination.sink(environment: ["JOURNAL_STREAM": "garbage"]) is StderrSink)
    }
}
