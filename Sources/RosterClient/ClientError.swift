import Glibc
import RosterProtocol

/// Why talking to the daemon failed, phrased for the person at the terminal.
public enum ClientError: Error, CustomStringConvertible, Equatable {
    case daemonNotRunning(socket: String)
    case permissionDenied(socket: String)
    case connectFailed(socket: String, errno: Int32)
    case connectionClosed
    case timedOut
    case malformedAnswer(String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let socket): "rosterd is not running (no one listens on \(socket))"
        case .permissionDenied(let socket): "permission denied on \(socket) (are you in the roster group?)"
        case .connectFailed(let socket, let code): "cannot connect to \(socket): \(String(cString: strerror(code)))"
        case .connectionClosed: "rosterd closed the connection"
        case .timedOut: "rosterd did not answer in time"
        case .malformedAnswer(let line): "rosterd sent something that is not JSON-RPC: \(line.prefix(200))"
        }
    }
}

/// A JSON-RPC error answer as the client receives it.
public struct RemoteError: Error, CustomStringConvertible, Equatable {
    public let code: Int64
    public let message: String
    public let reason: String
    public let data: JSONValue

    public init(code: Int64, message: String, reason: String, data: JSONValue) {
        self.code = code
        self.message = message
        self.reason = reason
        self.data = data
    }

    /// Reads the `error` member of an answer; missing parts read as empty rather than failing the whole answer.
    init(answerError error: JSONValue?) {
        self.init(code: error?["code"]?.int64Value ?? 0,
                  message: error?["message"]?.stringValue ?? "",
                  reason: error?["data"]?["reason"]?.stringValue ?? "",
                  data: error?["data"] ?? .null)
    }

    public var description: String { "\(message) (\(reason))" }
}

/// One line from the daemon, sorted: an event's params, or the answer to one of our requests.
public enum Incoming: Equatable {
    case event(JSONValue)
    case answer(id: Int64, Result<JSONValue, RemoteError>)
}
