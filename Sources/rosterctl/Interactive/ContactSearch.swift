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
        /// The daemon ended the session under the screen.
        case sessionEnded
    }

    /// Runs the search and prints the chosen contact; exit 0, 130 when cancelled, 1 when the session ended.
    static func run(_ context: VerbContext) throws -> Int32 {
        let text = ContactsText.forLocale(context.locale)
        switch try search(context, text: text) {
        case .chosen(let contact):
            if context.json != nil { context.printJSON(contact.raw) } else { contact.detail.forEach(printLine) }
            return 0
        case .sessionEnded:
            writeError("rosterctl: \(text.sessionEnded)")
            return 1
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
            if screen.sessionEnded { return .sessionEnded }
            painter.paint(ContactsRenderer(text: text, rows: painter.size.rows, columns: painter.size.columns).frame(screen))
            let turn = TerminalTurn.next(decoder: &decoder, connection: connection, signals: signals)
            if turn.inputClosed { return .cancelled(signal: nil) }
            for key in turn.keys {
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
            if turn.daemonReady, let incoming = try connection.receive(timeoutMs: 0), case .event(let event) = incoming {
                screen.apply(event: event)
            }
            for signal in turn.signals {
                guard signal == SIGWINCH else { return .cancelled(signal: signal) }
                painter.size = terminal.size()
                painter.invalidate()
            }
        }
    }
}
