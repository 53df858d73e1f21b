import Glibc
import RosterClient

/// What one wait of an interactive screen brought: keys typed, a line from the daemon, signals.
struct TerminalTurn {
    var keys: [Key] = []
    var daemonReady = false
    var signals: [Int32] = []
    /// The keyboard side closed (EOF or an error): the screen can only cancel.
    var inputClosed = false

    /// Waits for the keyboard, the daemon or a signal. A held ESC waits 40 ms for the rest of its sequence;
    /// after that it was the Escape key.
    static func next(decoder: inout KeyDecoder, connection: ClientConnection, signals: SignalWatch) -> TerminalTurn {
        var turn = TerminalTurn()
        var entries = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signals.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        let ready = poll(&entries, 3, decoder.hasPending ? 40 : -1)
        if ready < 0 { return turn }
        if ready == 0 { turn.keys = decoder.flush() }
        if entries[0].revents != 0 {
            var bytes = [UInt8](repeating: 0, count: 4096)
            let count = bytes.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { turn.inputClosed = true }
            if count > 0 { turn.keys += decoder.feed(Array(bytes[..<count])) }
        }
        turn.daemonReady = entries[1].revents != 0
        if entries[2].revents != 0 { turn.signals = signals.take() }
        return turn
    }
}
