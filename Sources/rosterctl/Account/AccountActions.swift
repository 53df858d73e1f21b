import Glibc
import RosterClient
import RosterProtocol

/// The `account` commands that are one call each: show, email, delete and recovery codes.
enum AccountActions {
    static func show(_ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        let result = try connection.result("account.show", verb: "account show")
        if context.json != nil { context.printJSON(result) } else { showLines(result).forEach(printLine) }
        return 0
    }

    /// `account.show`'s answer as `Label: value` lines, labels right-aligned as hostnamectl prints them; times
    /// as the daemon sends them (RFC 3339, UTC).
    static func showLines(_ result: JSONValue) -> [String] {
        let email = result["email"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "-"
        let totp = result["totp"]?.boolValue == true ? "on (log-ins need a one-time code)" : "off"
        // Without an email there is nothing to verify; a daemon that does not say is shown as not saying.
        let verified = email == "-" ? "-" : result["email_verified"]?.boolValue.map {
            $0 ? "yes" : "no (rosterctl account verify-email)"
        } ?? "-"
        let rows: [(String, String)] = [
            ("Username", result["username"]?.stringValue ?? "-"),
            ("Email", email),
            ("Email verified", verified),
            ("Created", result["created_at"]?.stringValue ?? "-"),
            ("Two-step log-in", totp),
            ("Recovery codes left", result["recovery_codes_left"]?.int64Value.map(String.init) ?? "-"),
        ]
        let width = rows.map { displayWidth($0.0) }.max() ?? 0
        return rows.map { String(repeating: " ", count: width - displayWidth($0.0)) + $0.0 + ": " + $0.1 }
    }

    /// Asks for the password, then calls `method` with it (and `params`) as the kept session, returning the result
    /// and the connection for what follows. The daemon checks the password on its hashing lane, which may queue,
    /// so the answer is awaited without a deadline.
    static func callWithPassword(_ method: String, _ params: [(String, JSONValue)] = [], passwordStdin: Bool,
                                 verb: String, _ context: VerbContext) throws -> (JSONValue, ClientConnection) {
        let password = try readSecret(.password, passwordStdin: passwordStdin, context: context, verb: verb)
        let connection = try context.connectLoggedIn()
        connection.answerTimeoutMs = nil
        return (try connection.result(method, .object([("password", .string(password))] + params), verb: verb), connection)
    }

    static func changeEmail(_ email: String, passwordStdin: Bool, _ context: VerbContext) throws -> Int32 {
        let (result, _) = try callWithPassword("account.change_email", [("email", .string(email))], passwordStdin: passwordStdin,
                                               verb: "account email", context)
        if context.json != nil {
            context.printJSON(result)
        } else if let changed = result["email"]?.stringValue, !changed.isEmpty {
            printLine("email changed to \(changed)")
        } else {
            printLine("email removed")
        }
        return 0
    }

    /// Deleting is for good, so a person types the account's name first; a script says `--yes` instead. The
    /// kept session dies with the account, so its file goes too.
    static func delete(yes: Bool, passwordStdin: Bool, _ context: VerbContext) throws -> Int32 {
        let (connection, username) = try context.loggedInSession()
        if !yes {
            let typed = try promptLine("This deletes \(username), its contacts and sessions for good.\n"
                                       + "Type the username to go on: ", hidden: false, what: "username")
            guard typed == username else {
                throw CommandFailure(description: "account delete: '\(typed)' is not \(username); nothing was deleted")
            }
        }
        let password = try readSecret(.password, passwordStdin: passwordStdin, context: context, verb: "account delete")
        connection.answerTimeoutMs = nil
        _ = try connection.result("account.delete", ["password": .string(password)], verb: "account delete")
        context.sessionFile?.remove()
        if context.json != nil { context.printJSON(["deleted": .string(username)]) } else { printLine("deleted account \(username)") }
        return 0
    }

    /// The codes go to stdout one a line (for a password manager or a printer), the warning to stderr.
    static func recoveryCodes(passwordStdin: Bool, _ context: VerbContext) throws -> Int32 {
        let (result, _) = try callWithPassword("account.recovery_codes", passwordStdin: passwordStdin,
                                               verb: "account recovery-codes", context)
        if context.json != nil {
            context.printJSON(result)
            return 0
        }
        let codes = result["codes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        codes.forEach(printLine)
        writeError("rosterctl: keep these \(codes.count) codes somewhere safe: each works once (rosterctl recover), "
                   + "older ones no longer work, and they are not shown again")
        return 0
    }
}
