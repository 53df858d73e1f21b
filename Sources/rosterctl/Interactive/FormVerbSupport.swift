import Glibc
import RosterProtocol

/// What `register` and `login` share: the choice between the interactive form and the script path, and
/// how either ends.
enum FormVerbSupport {
    /// Runs the interactive form and turns its outcome into output and an exit status; a log-in is kept.
    ///
    /// - Parameters:
    ///   - loggedIn: the form acts on the kept session's user (the password form), so it opens after resuming it.
    ///   - finish: prints a success; by default the register and log-in forms' username.
    static func runInteractive(form: String, context: VerbContext, prefill: [(field: String, value: String)],
                               loggedIn: Bool = false,
                               finish: ((JSONValue, String) -> Int32)? = nil) throws -> Int32 {
        let outcome = try InteractiveForm(form: form, context: context, prefill: prefill, loggedIn: loggedIn).run()
        switch outcome {
        case .cancelled(let signal):
            writeError("rosterctl: \(FormText.forForm(form, locale: context.locale).cancelled)")
            guard let signal, signal != SIGINT else { return 130 }
            return 128 + signal
        case .submitted(let result, let message):
            context.storeToken(result["token"]?.stringValue)
            return finish?(result, message) ?? succeeded(result, message: message, context: context)
        }
    }

    /// Prints a successful register or log-in: the username for scripts, JSON without the token for `--json`.
    static func succeeded(_ result: JSONValue, message: String, context: VerbContext) -> Int32 {
        let username = result["username"]?.stringValue ?? ""
        if context.json != nil {
            context.printJSON(["username": .string(username)])
        } else if message.isEmpty {
            printLine(username)
        } else {
            printLine(context.style.paint("✓ \(message)", .colour(.green)) + " " + username)
        }
        return 0
    }

}
