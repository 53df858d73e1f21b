import RosterCore

/// One request in a connection's pipeline: statements that go out together and are answered together.
struct PGPipelineRequest: Equatable {
    /// Who the answer is for.
    enum Kind: Equatable {
        /// A caller, who gets `deliver`.
        case caller
        /// `SET statement_timeout` (and a listener's LISTEN) after each connect: the connection is ready once it is done.
        case setup
        /// A `SELECT 1` on an idle connection, to find a dead one before a caller does.
        case heartbeat
        /// The connection's own work whose answer nobody waits for (a released lease's ROLLBACK).
        case chore
    }

    let id: UInt64
    let kind: Kind
    let statements: [PGStatement]
    /// One pipeline segment (one Sync) for all statements, so that they commit or roll back together (an
    /// implicit transaction); otherwise a Sync after each statement, so that each stands on its own.
    let transaction: Bool

    /// How many Syncs the driver sends, and so how many `PGRES_PIPELINE_SYNC` results end this request.
    var segments: Int { transaction ? 1 : max(1, statements.count) }
}

extension PGConnectionStateMachine {
    /// A request sent and not yet answered in full: what its results have been so far, and when it is overdue.
    struct InFlight: Equatable {
        let request: PGPipelineRequest
        let deadline: Instant
        var segmentsLeft: Int
        var results: [PGResult] = []
        /// The request's first failure: it is the answer, whatever comes after it.
        var failure: PGFailure?

        init(_ request: PGPipelineRequest, deadline: Instant) {
            self.request = request
            self.deadline = deadline
            segmentsLeft = request.segments
        }

        /// Takes one result read in pipeline order; true once its last Sync has come and the answer is whole.
        mutating func take(_ outcome: LibPQ.Outcome) -> Bool {
            switch outcome {
            case .done(let result):
                if failure == nil { results.append(result) }
                return false
            case .failed(let failure):
                if self.failure == nil { self.failure = failure }
                return false
            case .aborted:
                return false
            case .sync:
                segmentsLeft -= 1
                return segmentsLeft == 0
            }
        }

        /// The answer a caller gets.
        var answer: Result<[PGResult], PGFailure> { failure.map { .failure($0) } ?? .success(results) }
    }

    /// The requests in flight on a busy connection, oldest first. Never empty: a connection with nothing in flight
    /// is idle, so "busy with nothing to wait for" cannot be written down.
    struct Pipeline: Equatable {
        /// The one whose results come next.
        private(set) var oldest: InFlight
        private(set) var behind: [InFlight]

        init(_ first: InFlight) {
            oldest = first
            behind = []
        }

        var count: Int { 1 + behind.count }

        /// Every request, oldest first.
        var all: [InFlight] { [oldest] + behind }

        /// The earliest deadline: the oldest was sent first, but it is asked rather than assumed.
        var earliestDeadline: Instant { behind.reduce(oldest.deadline) { min($0, $1.deadline) } }

        mutating func append(_ entry: InFlight) { behind.append(entry) }

        /// Hands one result to the oldest request; its whole answer once its last Sync has come, with what is
        /// left behind it (nil when it was the last).
        func taking(_ outcome: LibPQ.Outcome) -> (pipeline: Pipeline?, done: InFlight?) {
            var next = self
            guard next.oldest.take(outcome) else { return (next, nil) }
            let done = next.oldest
            guard !next.behind.isEmpty else { return (nil, done) }
            next.oldest = next.behind.removeFirst()
            return (next, done)
        }
    }

    /// What the socket is watched for (level-triggered).
    struct Watch: Equatable {
        var readable: Bool
        var writable: Bool

        /// After connecting: always readable (results, notifications, the server closing), writable while libpq
        /// holds output.
        static func connected(outputPending: Bool) -> Watch { Watch(readable: true, writable: outputPending) }

        var action: Action { .watch(readable: readable, writable: writable) }
    }
}
