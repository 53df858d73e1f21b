import CLinux
import Glibc
import RosterCore
import RosterProtocol
import RosterRuntime

/// The listening socket on the loop: accepts every pending connection, non-blocking and close-on-exec, and hands
/// each descriptor on. Out of descriptors (EMFILE, ENFILE), it stops watching for a while rather than spin.
final class ConnectionAcceptor {
    /// How long accepting pauses once the process or the system is out of descriptors.
    static let pauseOnExhaustion = Duration.milliseconds(100)

    private let loop: EventLoop
    var logger: Logger
    /// Called with each accepted descriptor, which is now the callee's to close.
    var onAccept: (Int32) -> Void = { Glibc.close($0) }
    private var listener: UnixListener?
    private var registration: EventLoop.RegistrationID?

    init(loop: EventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
    }

    var isListening: Bool { listener != nil }

    func listen(on listener: UnixListener) throws(SystemError) {
        self.listener = listener
        registration = try loop.register(fd: listener.fd, events: EPOLLIN.rawValue) { [unowned self] _ in
            self.acceptPending()
        }
    }

    /// Stops accepting and closes the listening socket.
    func close() {
        if let registration { loop.deregister(registration) }
        registration = nil
        listener?.close()
        listener = nil
    }

    private func acceptPending() {
        guard let listener else { return }
        while true {
            let accepted: IOResult<Int32>
            do {
                accepted = try Syscall.nonBlocking("accept4") {
                    accept4(listener.fd, nil, nil, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                }
            } catch {
                logger.warning("accept failed: \(error)")
                if error.errno == EMFILE || error.errno == ENFILE { pauseAccepting() }
                return
            }
            guard case .done(let fd) = accepted else { return }
            onAccept(fd)
        }
    }

    /// Out of descriptors, a level-triggered listener would spin; wait a little for some to be freed.
    private func pauseAccepting() {
        guard let registration else { return }
        watch(registration, events: 0)
        loop.schedule(at: loop.now + Self.pauseOnExhaustion) { [weak self] in
            guard let self, let registration = self.registration else { return }
            self.watch(registration, events: EPOLLIN.rawValue)
        }
    }

    private func watch(_ registration: EventLoop.RegistrationID, events: UInt32) {
        do {
            try loop.modify(registration, events: events)
        } catch {
            logger.warning("cannot \(events == 0 ? "pause" : "resume") accepting: \(error)")
        }
    }

    /// Over a limit: one error line the client can read, then the door closes.
    static func refuse(_ fd: Int32, limit: Int, logger: Logger) {
        let line = RPCMessage.error(id: .null, .busy(retryAfterMs: 1_000),
                                    message: MessageCatalog.message(for: .busy(retryAfterMs: 1_000), locale: .default))
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.close(fd)
        logger.warning("connection refused: limit of \(limit) reached")
    }
}
