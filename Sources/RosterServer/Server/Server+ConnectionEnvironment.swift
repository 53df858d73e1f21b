import RosterRuntime

/// The server is every connection's environment: the rest of what a connection asks (`dispatch`,
/// `rejectOversizedLine`, `sendError`, the output budget, `authChangeEnded`, `outputDrained`,
/// `connectionClosed`, `logger`, `readBuffer`, `isStopping`) it already has under those names.
extension Server: ConnectionEnvironment {
    var eventLoop: any EventLoopProtocol { loop }

    func requestAnswered() {
        stats.requestsServed += 1
    }
}
