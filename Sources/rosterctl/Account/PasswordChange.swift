import RosterClient
import RosterProtocol

/// `rosterctl account password`: the daemon's password form on a terminal; for scripts the current password
/// (`$ROSTER_PASSWORD`, or stdin's first line) and the new one (`$ROSTER_NEW_PASSWORD`, or the next line).
enum PasswordChange {
    static func run(passwordStdin: Bool, _ context: VerbContext) throws -> Int32 {
        if !passwordStdin && canRunInteractively(environment: context.environment) {
            return try FormVerbSupport.runInteractive(form: "password", context: context, prefill: [], loggedIn: true) {
                result, message in changed(result, message: message, context: context)
            }
        }
        let current = try readSecret(.currentPassword, passwordStdin: passwordStdin, context: context, verb: "account password")
        let new = try readSecret(.newPassword, passwordStdin: passwordStdin, context: context, verb: "account password")
        let connection = try context.connectLoggedIn()
        // The current password is checked on the daemon's hashing lane, which may queue.
        connection.answerTimeoutMs = nil
        let result = try connection.result("account.change_password", ["current": .string(current), "new": .string(new)],
                                           verb: "account password")
        return changed(result, message: "", context: context)
    }

    /// `{revoked}` for `--json`; for people, how many other sessions were logged out.
    static func changed(_ result: JSONValue, message: String, context: VerbContext) -> Int32 {
        if context.json != nil {
            context.printJSON(["revoked": result["revoked"] ?? .int(0)])
            return 0
        }
        let revoked = result["revoked"]?.int64Value ?? 0
        let others = revoked == 1 ? "1 other session was" : "\(revoked) other sessions were"
        guard !message.isEmpty else {
            printLine("password changed; \(others) logged out")
            return 0
        }
        // The form's own words say it changed; what is left to tell is who else was logged out.
        printLine(context.style.paint("✓ \(message)", .colour(.green)) + " (\(others) logged out)")
        return 0
    }
}
