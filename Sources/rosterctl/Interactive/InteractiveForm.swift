import Glibc
import RosterClient
import RosterProtocol

/// Runs a daemon form on the terminal: keys become `form.input`, events become the picture.
///
/// One `poll` waits on stdin, the socket and a signalfd, so typing, verdicts and SIGWINCH/SIGINT are handled
/// in one thread in arrival order. Every edit is sent as it happens; the daemon debounces.
struct InteractiveForm {
    /// How the form ended.
    enum Outcome {
        case submitted(result: JSONValue, message: String)
        case cancelled(signal: Int32?)
    }

    let form: String
    let context: VerbContext
    var prefill: [(field: String, value: String)] = []
    /// Open the form as the kept session's user (the password form needs one; the others must not resume).
    var loggedIn = false

    func run() throws -> Outcome {
        let connection = try loggedIn ? context.connectLoggedIn() : context.connect(resume: false)
        let snapshot: JSONValue
        switch try connection.call("form.open", ["form": .string(form)]) {
        case .success(let value): snapshot = value
        case .failure(let error): throw failure(form, error)
        }
        guard var screen = FormScreen(form: form, snapshot: snapshot) else {
            throw CommandFailure(description: "\(form): the daemon's form.open answer has no fields")
        }
        for (field, value) in prefill {
            guard let index = screen.fields.firstIndex(where: { $0.name == field }), screen.fields[index].enabled else { continue }
            screen.fields[index].editor = LineEditor(text: value)
            try connection.send("form.input", ["form": .string(form), "field": .string(field), "value": .string(value)])
        }
        let signals = try SignalWatch([SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT])
        let terminal = try RawTerminal()
        terminal.enter()
        defer { terminal.restore() }
        let text = FormText.forForm(form, locale: context.locale)
        var painter = Painter(style: context.style, size: terminal.size())
        var decoder = KeyDecoder()
        var submitID: Int64?

        while true {
            while connection.hasBufferedInput, let incoming = try connection.receive(timeoutMs: 0) {
                if let outcome = absorb(incoming, into: &screen, submitID: submitID) { return outcome }
            }
            painter.paint(FormRenderer(text: text, rows: painter.size.rows, columns: painter.size.columns).frame(screen))
            let turn = TerminalTurn.next(decoder: &decoder, connection: connection, signals: signals)
            if turn.inputClosed { return .cancelled(signal: nil) }
            for key in turn.keys {
                for action in screen.handle(key) {
                    switch action {
                    case .input(let field, let value):
                        try connection.send("form.input", ["form": .string(form), "field": .string(field), "value": .string(value)])
                    case .submit:
                        submitID = try connection.send("form.submit", ["form": .string(form)])
                    case .cancel:
                        return .cancelled(signal: nil)
                    case .redraw:
                        painter.invalidate()
                    }
                }
            }
            if turn.daemonReady, let incoming = try connection.receive(timeoutMs: 0) {
                if let outcome = absorb(incoming, into: &screen, submitID: submitID) { return outcome }
            }
            for signal in turn.signals {
                guard signal == SIGWINCH else { return .cancelled(signal: signal) }
                painter.size = terminal.size()
                painter.invalidate()
            }
        }
    }

    /// Folds one line from the daemon into the screen; the outcome once the submit's answer is a success.
    private func absorb(_ incoming: Incoming, into screen: inout FormScreen, submitID: Int64?) -> Outcome? {
        switch incoming {
        case .event(let event):
            screen.apply(event: event)
        case .answer(let id, let result) where id == submitID:
            switch result {
            case .success(let value):
                if case .succeeded(let message) = screen.submit { return .submitted(result: value, message: message) }
                return .submitted(result: value, message: "")
            case .failure(let error):
                screen.submitFailed(error.message, reason: error.reason)
            }
        case .answer:
            // form.input answers carry only the rev; a refused input shows up as the field's state anyway.
            break
        }
        return nil
    }
}

/// Draws frames on the terminal, only when they changed; the forms and the contact search share it.
struct Painter {
    let style: Style
    var size: (rows: Int, columns: Int)
    private var last: FormRenderer.Frame?

    init(style: Style, size: (rows: Int, columns: Int)) {
        self.style = style
        self.size = size
    }

    /// Forgets the last frame, so the next paint clears and draws everything (resize, Ctrl-L).
    mutating func invalidate() {
        last = nil
        writeRaw(1, "\u{1B}[H\u{1B}[2J")
    }

    mutating func paint(_ frame: FormRenderer.Frame) {
        guard frame != last else { return }
        last = frame
        var out = "\u{1B}[?25l\u{1B}[H"
        for (index, line) in frame.lines.enumerated() {
            out += line.map { style.paint($0.text, $0.look) }.joined() + "\u{1B}[K"
            if index < frame.lines.count - 1 { out += "\r\n" }
        }
        out += "\u{1B}[J"
        if let cursor = frame.cursor { out += "\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h" }
        writeRaw(1, out)
    }
}
