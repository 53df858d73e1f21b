import RosterRuntime
// ReadGate — whether a connection's requests are read now (back-pressure, as every proxy does it).
//
// RULES
//   • Reading stops when the connection's unsent output is above `pauseBytes`, or when `maxInFlight` of its
//     requests were read and are not answered yet: a peer that sends without reading then fills its own socket,
//     not the daemon's memory.
//   • While the output budget (all connections, or those of the peer's uid) is spent, reading also stops for a
//     connection holding more than `resumeBytes`: the connections holding the most stop first, and one holding
//     little (a fresh `session.whoami`) is still served.
//   • Reading resumes once the output is at most `resumeBytes` and fewer than `maxInFlight` requests are in
//     flight. The gap between the two marks keeps a connection from flapping around one value.
//
// THEORY OF OPERATION
//   The connection asks `update` after every change that matters (a line about to be served, an answer queued,
//   a write, a request finished) and acts on the change it returns: drop or restore its EPOLLIN interest. Lines
//   already read when the gate closes wait in the connection, unserved, until it opens again.

/// Back-pressure for one connection's reading: facts in (its output, its requests in flight, the budget), a
/// decision out.
struct ReadGate: Equatable {
    /// The marks in force (they follow a configuration reload).
    struct Limits: Equatable {
        var pauseBytes: Int
        var resumeBytes: Int
        var maxInFlight: Int
    }

    /// What the connection must do about its reading.
    enum Change: Equatable {
        case pause
        case resume
    }

    private(set) var isPaused = false

    /// Moves the gate for the facts given; nil when it stays as it was. `overBudget` is asked only when it can
    /// matter (the output is above `resumeBytes`), since this runs before every line a peer sends.
    mutating func update(outputBytes: Int, inFlight: Int, overBudget: () -> Bool, limits: Limits) -> Change? {
        if isPaused {
            guard outputBytes <= limits.resumeBytes, inFlight < limits.maxInFlight else { return nil }
            isPaused = false
            return .resume
        }
        guard !staysOpen(outputBytes: outputBytes, inFlight: inFlight, limits: limits) else { return nil }
        let overPause = outputBytes > limits.pauseBytes || (outputBytes > limits.resumeBytes && overBudget())
        guard overPause || inFlight >= limits.maxInFlight else { return nil }
        isPaused = true
        return .pause
    }

    /// Whether the gate is open and nothing below the resume mark could close it: asked before every line, so
    /// the common case costs two comparisons.
    func staysOpen(outputBytes: Int, inFlight: Int, limits: Limits) -> Bool {
        !isPaused && outputBytes <= limits.resumeBytes && inFlight < limits.maxInFlight
    }
}
