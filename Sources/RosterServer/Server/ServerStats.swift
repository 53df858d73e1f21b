/// The daemon's counters, for `admin.stats` and the status line. One instance is shared by the parts that count:
/// the connections (requests answered), the sessions (events sent) and the server (connections accepted).
/// Everything here runs on the loop thread.
final class ServerStats {
    var requestsServed = 0
    var eventsSent = 0
    var connectionsAccepted = 0

    init(requestsServed: Int = 0, eventsSent: Int = 0, connectionsAccepted: Int = 0) {
        self.requestsServed = requestsServed
        self.eventsSent = eventsSent
        self.connectionsAccepted = connectionsAccepted
    }
}
