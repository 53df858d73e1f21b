import RosterCore
import RosterProtocol
import RosterRuntime

/// What a connection needs of the daemon around it, and nothing more: the loop it runs on, where its lines go
/// and how its errors are worded, the shared read buffer, the output budget, the counters, and whom to tell that
/// it drained or closed. The server in the daemon; a recording double in the connection's tests.
protocol ConnectionEnvironment: AnyObject {
    /// The loop the connection's socket and timers run on.
    var eventLoop: any EventLoopProtocol { get }
    var logger: Logger { get }
    /// Shared by every connection of the loop: reads happen one at a time on its thread, so one buffer serves
    /// all, and a read's lines are served straight from it before the next read.
    var readBuffer: UnsafeMutableBufferPointer<UInt8> { get }
    /// Whether the daemon is stopping: a connection with nothing owed then closes even if its peer still writes.
    var isStopping: Bool { get }

    /// Serves one line the peer sent; `line` is valid only for the call.
    func dispatch(line: UnsafeBufferPointer<UInt8>, from connection: Connection)
    /// Answers a line longer than `[Server] MaxLineBytes=`.
    func rejectOversizedLine(from connection: Connection)
    /// Queues `error` as the answer to request `id`, worded in the session's locale.
    func sendError(_ error: RosterError, id: JSONValue, to connection: Connection)
    /// A request was answered (counted for `admin.stats`).
    func requestAnswered()
    /// A change of who the session is was answered: the requests held behind it may now be served.
    func authChangeEnded(on connection: Connection)

    /// A connection of `uid` now holds `delta` bytes more (or fewer) unsent.
    func outputQueuedChanged(uid: UInt32, by delta: Int)
    /// Whether all connections together, or those of `uid`, hold as much unsent output as they may.
    func isOutputBudgetSpent(uid: UInt32) -> Bool
    /// The connection's output is all written, and someone waited for that (see `Connection.notifyWhenDrained`).
    func outputDrained(_ connection: Connection)
    /// The connection closed; it is called once, and the connection takes no more input.
    func connectionClosed(_ connection: Connection)
}
