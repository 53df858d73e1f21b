import Glibc
import RosterClient
import RosterProtocol

/// `rosterctl watch [FORM...]`: prints this session's events as they come, until interrupted (exit 130).
///
/// A connection only hears about itself, so watching is useful with forms open (`watch register` shows live
/// `taken` verdicts) or with the stored session resumed (its `session` event comes first).
struct WatchVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "watch", usage: "watch [FORM...]", summary: "Print the session's events (opening FORMs first) until Ctrl-C",
        group: .daemon)

    let forms: [String]

    init(arguments: [String]) throws(UsageError) {
        forms = try VerbArguments(arguments, verb: "watch").positionals(min: 0, max: 8, verb: "watch", usage: Self.configuration.usage)
    }

    func run(_ context: VerbContext) throws -> Int32 {
        let signals = try SignalWatch([SIGINT, SIGTERM, SIGHUP])
        let connection = try context.connect()
        for form in forms {
            if case .failure(let error) = try connection.call("form.open", ["form": .string(form)]) {
                throw failure("watch", error)
            }
        }
        while true {
            while connection.hasBufferedInput {
                if case .event(let event)? = try connection.receive(timeoutMs: 0) { show(event, context) }
            }
            var entries = [pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: signals.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if entries[1].revents != 0, let signal = signals.take().first {
                return signal == SIGINT ? 130 : 128 + signal
            }
            if entries[0].revents != 0, case .event(let event)? = try connection.receive(timeoutMs: 0) {
                show(event, context)
            }
        }
    }

    private func show(_ event: JSONValue, _ context: VerbContext) {
        if context.json != nil {
            context.printJSON(event)
        } else {
            printLine(describeEvent(event))
        }
    }
}

/// One line per event for people: its type, what it is about, then its verdict and message.
func describeEvent(_ event: JSONValue) -> String {
    func text(_ key: String) -> String {
        guard let value = event[key] else { return "-" }
        return value.stringValue ?? value.description
    }
    switch event["type"]?.stringValue {
    case "field"?: return "field   \(text("form")).\(text("field")) \(text("state")) \(text("code")) rev=\(text("rev")) \(text("message"))"
    case "form"?: return "form    \(text("form")) submittable=\(text("submittable"))"
    case "submit"?: return "submit  \(text("form")) \(text("state")) \(text("code")) \(text("message"))"
    case "session"?: return "session user=\(event["user"]?.stringValue ?? "(none)")"
    case "results"?: return "results \(text("form")) query=\(text("query")) \(event["items"]?.arrayValue?.count ?? 0)/\(text("total"))"
    default: return event.description
    }
}
