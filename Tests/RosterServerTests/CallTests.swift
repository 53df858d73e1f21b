import RosterCore
import RosterProtocol
import Testing
@testable import RosterServer

@Suite("A call answered against a recording host")
struct CallTests {
    /// No params: a call's answering does not look at them.
    private static let noParams: Params = {
        do { return try Params(validating: [], against: []) } catch { fatalError("empty params are always valid") }
    }()

    private func call(id: JSONValue?, on host: RecordingCallHost) -> RequestCall<RecordingCallHost> {
        RequestCall(id: id, params: Self.noParams, connection: host)
    }

    @Test func aResultIsDeliveredAsOneLineForItsIDThenTheRequestEnds() {
        let host = RecordingCallHost()
        call(id: .int(7), on: host).succeed(.object([("rev", .int(3))]))
        #expect(host.history == [
            .answered, .answer(#"{"jsonrpc":"2.0","id":7,"result":{"rev":3}}"# + "\n", id: .int(7)), .finished,
        ])
    }

    @Test func aLineBuiltElsewhereIsDeliveredAsItIs() {
        let host = RecordingCallHost()
        let line = Array(#"{"jsonrpc":"2.0","id":"p","result":[]}"#.utf8) + [0x0A]
        call(id: .string("p"), on: host).finish(line: .success(line))
        #expect(host.history == [.answered, .answer(String(decoding: line, as: UTF8.self), id: .string("p")), .finished])
    }

    @Test func aFailureIsDeliveredAsThatErrorForItsID() {
        let host = RecordingCallHost()
        call(id: .int(8), on: host).finish(Result<JSONValue, RosterError>.failure(.unauthenticated))
        #expect(host.history == [.answered, .error(.unauthenticated, id: .int(8)), .finished])
    }

    @Test func aNotificationIsNeverAnsweredButStillEnds() {
        for answer in [{ (call: RequestCall<RecordingCallHost>) in call.succeed([:]) }, { $0.fail(.forbidden) }] {
            let host = RecordingCallHost()
            answer(call(id: nil, on: host))
            #expect(host.history == [.answered, .finished])
        }
    }

    @Test func outputReservedForTheAnswerIsGivenBackBeforeTheAnswerGoesOut() {
        let host = RecordingCallHost()
        let call = call(id: .int(9), on: host)
        call.reserveOutput(100)
        call.reserveOutput(20)
        call.fail(.busy(retryAfterMs: 5))
        #expect(host.history == [.reserved(100), .reserved(20), .released(120), .answered,
                                 .error(.busy(retryAfterMs: 5), id: .int(9)), .finished])
    }

    @Test func anAuthChangeHoldsTheSessionUntilItsAnswerThenLetsWhatWaitedGo() {
        let host = RecordingCallHost()
        let call = call(id: .int(10), on: host)
        var answer: ((Result<JSONValue, RosterError>) -> Void)?
        call.asAuthChange { answer = $0 }
        // Marking it twice still counts one change.
        call.beginAuthChange()
        #expect(host.session.authChangesRunning == 1)
        #expect(host.history.isEmpty)
        answer?(.success(.object([("username", .string("ada"))])))
        #expect(host.session.authChangesRunning == 0)
        #expect(host.history == [
            .answered, .answer(#"{"jsonrpc":"2.0","id":10,"result":{"username":"ada"}}"# + "\n", id: .int(10)),
            .finished, .authChangeEnded,
        ])
    }

    @Test func aCallAnsweredAlreadyIsNoLongerAnAuthChange() {
        let host = RecordingCallHost()
        let call = call(id: .int(11), on: host)
        call.succeed([:])
        call.beginAuthChange()
        #expect(host.session.authChangesRunning == 0)
        #expect(host.history == [.answered, .answer(#"{"jsonrpc":"2.0","id":11,"result":{}}"# + "\n", id: .int(11)),
                                 .finished])
    }

    /// A second answer is a bug: debug builds (every test) stop on it, and release builds drop it.
    @Test func aSecondAnswerIsABugThatStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            let host = RecordingCallHost()
            let call = RequestCall(id: .int(12), params: try Params(validating: [], against: []), connection: host)
            call.succeed([:])
            call.fail(.forbidden)
        }
    }
}
