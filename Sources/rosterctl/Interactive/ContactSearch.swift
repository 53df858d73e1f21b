import Glibc
import RosterClient
import RosterProtocol

/// Runs the live contact search on the terminal: every edit of the query is a `form.input`, and the list is
/// redrawn from the daemon's throttled `results` events.
///
/// The same single-threaded `poll` over stdin, the socket and a signalfd as `InteractiveForm`, so keys,
/// results and SIGWINCH are handled in arrival order and the terminal is restored on every way out.
enum ContactSearch {
    /// How the search ended.
    enum Outcome {
        case chosen(ContactRecord)
        case cancelled(signal: Int32?)
    }

    /// Runs the search and prints the chosen contact; exit 0, or 130 when cancelled.
    static func run(_ context: VerbContext) throws -> Int32 {
        let text = ContactsText.forLocale(context.locale)
        switch try search(context, text: text) {
        case .chosen(let contact):
            if context.json != nil { context.printJSON(contact.raw) } else { contact.detail.forEach(printLine) }
            return 0
        case .cancelled(let signal):
            writeError("rosterctl: \(text.cancelled)")
            guard let signal, signal != SIGINT else { return 130 }
            return 128 + signal
        }
    }

    private static func search(_ context: VerbContext, text: ContactsText) throws -> Outcome {
        let connection = try context.connectLoggedIn()
        let snapshot: JSONValue
        switch try connection.call("form.open", ["form": "contacts"]) {
        case .success(let value): snapshot = value
        case .failure(let error): throw failure("contacts", error)
        }
        var screen = ContactsScreen(snapshot: snapshot)
        let signals = try SignalWatch([SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT])
        let terminal = try RawTerminal()
        terminal.enter()
        defer { terminal.restore() }
        var painter = Painter(style: context.style, size: terminal.size())
        var decoder = KeyDecoder()

        while true {
            while connection.hasBufferedInput, let incoming = try connection.receive(timeoutMs: 0) {
                if case .event(let event) = incoming { screen.apply(event: event) }
            }
            painter.paint(ContactsRenderer(text: text, rows: painter.size.rows, columns: painter.size.columns).frame(screen))
            var entries = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: signals.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            // A held ESC waits 40 ms for the rest of its sequence; after that it was the Escape key.
            let ready = poll(&entries, 3, decoder.hasPending ? 40 : -1)
            if ready < 0 && errno == EINTR { continue }
            var keys: [Key] = []
            if ready == 0 { keys = decoder.flush() }
            if entries[0].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 4096)
                let count = bytes.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return .cancelled(signal: nil) }
                if count > 0 { keys += decoder.feed(Array(bytes[..<count])) }
            }
            for key in keys {
                for action in screen.handle(key) {
                    switch action {
                    case .input(let query):
                        // Not awaited: the answer only carries the rev, and waiting would stall typing.
                        try connection.send("form.input", ["form": "contacts", "field": "query", "value": .string(query)])
                    case .choose(let contact):
                        return .chosen(contact)
                    case .cancel:
                        return .cancelled(signal: nil)
                    case .redraw:
                        painter.invalidate()
                    }
                }
            }
            if entries[1].revents != 0, let incoming = try connection.receive(timeoutMs: 0), case .event(let event) = incoming {
                screen.apply(event: event)
            }
            if entries[2].revents != 0 {
                for signal in signals.take() {
                    guard signal == SIGWINCH else { return .cancelled(signal: signal) }
                    painter.size = terminal.size()
                    painter.invalidate()
                }
            }
        }
    }
}
