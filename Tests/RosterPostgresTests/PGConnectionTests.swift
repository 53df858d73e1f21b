@testable import RosterPostgres
import RosterCore
import RosterPostgresTesting
import RosterRuntime
import Testing

/// One loop-driven connection against a real server, through its `MachineDriver`.
@Suite("PostgreSQL connection")
struct PGConnectionTests {
    let harness: LoopHarness
    let connection: PGConnection
    private let ready: Flag

    final class Flag { var value = false }

    init() throws {
        harness = try LoopHarness()
        let settings = PGPoolSettings(conninfo: try PostgresTestCluster.shared.createDatabase(), connections: 1)
        connection = PGConnection(conninfo: settings.conninfo, loop: harness.loop, logger: Logger(level: .err),
                                  timing: settings.timing, setup: settings.setup)
        let ready = Flag()
        self.ready = ready
        connection.onReady = { ready.value = true }
        connection.start()
        try harness.run(until: { ready.value })
    }

    /// A caller who sends again from its completion (as the pool does with what it parked) is answered in the
    /// order it sent, and what it sent counts as in flight at once, before the driver has stepped it: a pool that
    /// fills a pipeline from inside a completion cannot overfill it.
    @Test func requestsSentFromACompletionCountAtOnceAndAreAnsweredInOrder() throws {
        defer { connection.stop() }
        let connection = self.connection
        var answers: [Int64?] = []
        var countsInside: [Int] = []
        connection.execute([PGStatement("SELECT 1")], transaction: false) { result in
            answers.append(try? result.get().first?.rows.first?.int(0))
            countsInside.append(connection.inFlightCount)
            for value in [2, 3] {
                connection.execute([PGStatement("SELECT \(value)")], transaction: false) { result in
                    answers.append(try? result.get().first?.rows.first?.int(0))
                }
                countsInside.append(connection.inFlightCount)
            }
        }
        try harness.run(until: { answers.count == 3 })
        #expect(answers == [1, 2, 3])
        #expect(countsInside == [0, 1, 2])
        #expect(connection.inFlightCount == 0)
    }

    /// Stopped while a request is in flight: its caller is answered `.unavailable` once, and a caller who sends
    /// again from that answer is refused at once rather than sent on a closed connection.
    @Test func stoppedMidCallAnswersOnceAndRefusesWhatFollows() throws {
        let connection = self.connection
        var answers: [Result<[PGResult], PGFailure>] = []
        connection.execute([PGStatement("SELECT pg_sleep(5)")], transaction: false) { result in
            answers.append(result)
            connection.execute([PGStatement("SELECT 1")], transaction: false) { answers.append($0) }
        }
        connection.stop()
        #expect(answers.count == 2, "answered later than the stop")
        for answer in answers {
            guard case .failure(.unavailable) = answer else { Issue.record("not unavailable: \(answer)"); continue }
        }
        #expect(!connection.isReady && connection.inFlightCount == 0)
    }
}
