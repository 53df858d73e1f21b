import RosterCore
import RosterRuntime

/// The dedicated LISTEN connection: LISTEN on each channel after every connect, every notification handed on,
/// a heartbeat while idle, and reconnect with backoff. A NOTIFY sent while it is disconnected is lost, so
/// `onListening` tells the owner each time LISTEN is in place again, and the owner re-reads. Loop thread only.
public final class PGListener {
    private let connection: PGConnection
    private let logger: Logger
    private var listening = false

    /// Each notification, on the loop thread.
    public var onNotification: ((_ channel: String, _ payload: String) -> Void)?
    /// After every connection (the first too) once LISTEN is in place: whatever was sent meanwhile is lost,
    /// so the owner re-reads.
    public var onListening: (() -> Void)?
    /// When a connection that was listening is lost (once per loss, however many reconnects fail after it).
    public var onDisconnected: (() -> Void)?

    public init(conninfo: String, channels: [String], loop: EventLoop, logger: Logger, heartbeatMs: Int = 5_000) {
        self.logger = logger
        var settings = PGPoolSettings(conninfo: conninfo, connections: 1)
        settings.heartbeatMs = heartbeatMs
        let listen = channels.map { PGStatement("LISTEN " + PGListener.quoted($0)) }
        connection = PGConnection(conninfo: conninfo, loop: loop, logger: logger, timing: settings.timing,
                                  setup: settings.setup + listen)
        connection.onReady = { [unowned self] in
            self.listening = true
            self.onListening?()
        }
        connection.onBroken = { [unowned self] _, _ in
            guard self.listening else { return }
            self.listening = false
            self.onDisconnected?()
        }
        connection.onNotification = { [unowned self] channel, payload in self.onNotification?(channel, payload) }
    }

    /// Connects in the background.
    public func start() { connection.start() }

    /// Closes the connection; nothing more is reported.
    public func stop() {
        listening = false
        connection.stop()
    }

    /// A channel name as an SQL identifier: double quotes doubled inside double quotes.
    static func quoted(_ channel: String) -> String {
        "\"" + channel.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
