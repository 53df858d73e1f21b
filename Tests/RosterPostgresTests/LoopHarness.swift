import Glibc
import RosterCore
import RosterRuntime
import Testing

/// A loop the test's own thread turns, failing the test instead of hanging when an answer never comes.
final class LoopHarness {
    let loop: EventLoop
    private let loopThread = pthread_self()

    init() throws { loop = try EventLoop(signals: []) }

    func run(until done: () -> Bool, within limit: Duration = .seconds(15),
             sourceLocation: SourceLocation = #_sourceLocation) throws {
        let deadline = loop.now + limit
        while !done() {
            guard loop.now < deadline else {
                Issue.record("not done within \(limit)", sourceLocation: sourceLocation)
                return
            }
            try loop.runOnce(timeoutMs: 10)
        }
    }

    /// The one answer `call` gives, which must come on the loop thread, once.
    func answer<T>(within limit: Duration = .seconds(15), sourceLocation: SourceLocation = #_sourceLocation,
                   _ call: (@escaping (T) -> Void) -> Void) throws -> T {
        var answers: [T] = []
        let loopThread = self.loopThread
        call { answer in
            #expect(pthread_equal(pthread_self(), loopThread) != 0, "a completion ran off the loop thread")
            answers.append(answer)
        }
        try run(until: { !answers.isEmpty }, within: limit, sourceLocation: sourceLocation)
        try loop.runOnce(timeoutMs: 0)
        #expect(answers.count == 1, "answered \(answers.count) times", sourceLocation: sourceLocation)
        return try #require(answers.first, sourceLocation: sourceLocation)
    }
}

/// A charge for a caller on client connection `connection`.
func charge(_ connection: UInt64, payer: Int64 = 1) -> QueueCharge {
    QueueCharge(payer: .account(payer), connection: connection)
}
