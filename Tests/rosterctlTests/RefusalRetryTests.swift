import RosterClient
import RosterProtocol
import Testing
@testable import rosterctl

/// Which refusals rosterctl asks again, and how long it waits: reads ride out a busy daemon and a database that is
/// away; a write is sent again only after `busy`, which did nothing.
@Suite("rosterctl asks again after a refusal that did nothing")
struct RefusalRetryTests {
    private static func refusal(_ reason: String, _ retryAfterMs: Int64) -> Result<JSONValue, RemoteError> {
        .failure(RemoteError(code: 1041, message: "m", reason: reason,
                             data: ["reason": .string(reason), "retry_after_ms": .int(retryAfterMs)]))
    }

    /// Answers `refusals` in order, then success; records each wait.
    private final class Script {
        var answers: [Result<JSONValue, RemoteError>]
        var sent = 0
        var waits: [Int64] = []

        init(_ answers: [Result<JSONValue, RemoteError>]) { self.answers = answers }

        func send() -> Result<JSONValue, RemoteError> {
            sent += 1
            return answers.isEmpty ? .success(["ok": true]) : answers.removeFirst()
        }
    }

    private func run(_ retry: RefusalRetry, _ script: Script) -> Result<JSONValue, RemoteError> {
        retry.run(sleep: { script.waits.append($0) }) { script.send() }
    }

    @Test func aReadRidesOutAnOutageAndABusyDaemonWaitingWhatTheyName() {
        let script = Script([Self.refusal("storage_unavailable", 1_000), Self.refusal("busy", 40),
                             Self.refusal("storage_unavailable", 9_000)])
        #expect(run(.forReads, script) == .success(["ok": true]))
        #expect(script.sent == 4)
        // The hint, above a floor that doubles, and never more than 5 s at a time.
        #expect(script.waits == [1_000, 40, 5_000])
    }

    @Test func aWriteIsSentAgainOnlyAfterBusy() {
        let busy = Script([Self.refusal("busy", 30)])
        #expect(run(.forWrites, busy) == .success(["ok": true]))
        #expect(busy.waits == [30])
        let outage = Script([Self.refusal("storage_unavailable", 1_000)])
        #expect(run(.forWrites, outage) == Self.refusal("storage_unavailable", 1_000))
        #expect(outage.sent == 1 && outage.waits.isEmpty)
    }

    @Test func anotherFailureIsTheAnswerAtOnceAndRetriesEnd() {
        let other = Script([Self.refusal("not_found", 0)])
        #expect(run(.forReads, other) == Self.refusal("not_found", 0))
        #expect(other.sent == 1)
        let endless = Script(Array(repeating: Self.refusal("storage_unavailable", 1), count: 100))
        #expect(run(.forReads, endless) == Self.refusal("storage_unavailable", 1))
        #expect(endless.sent == RefusalRetry.retries + 1)
    }
}
