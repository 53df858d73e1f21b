import Glibc
import RosterClient
import RosterProtocol

/// `rosterctl account totp enroll|confirm|disable`: two-step log-in with an authenticator app (RFC 6238).
enum TOTPEnrolment {
    /// Wrong codes a person may type at the prompt before enrolment is left pending (each one counts as a failed
    /// log-in at the daemon, so the prompt does not loop for ever).
    static let promptAttempts = 3

    /// Asks for the password, shows the secret (a QR code on a terminal), then asks for a code to confirm it.
    ///
    /// The code comes after the URI is printed, so a script holding rosterctl's pipes (a coprocess) can read the
    /// URI, compute the code and write it as the next stdin line; with no line left, enrolment stays pending
    /// for `account totp confirm`. `$ROSTER_CODE` is not read here: it was set before this secret existed, so it
    /// can only be a stale code for another log-in.
    static func enroll(passwordStdin: Bool, _ context: VerbContext) throws -> Int32 {
        let (result, connection) = try AccountActions.callWithPassword("account.totp_enroll", passwordStdin: passwordStdin,
                                                                       verb: "account totp enroll", context)
        let uri = result["uri"]?.stringValue ?? ""
        if context.json != nil {
            context.printJSON(result)
        } else {
            if isatty(1) == 1, let matrix = QRMatrix(encoding: uri) {
                matrix.halfBlockLines().forEach(printLine)
                printLine("")
            }
            printLine(uri)
            printLine("Secret: \(result["secret"]?.stringValue ?? "")")
        }
        if passwordStdin {
            guard let code = readStandardInputLine(), !code.isEmpty else { return pending() }
            return try confirm(code, connection, context)
        }
        guard isatty(0) == 1 else { return pending() }
        for attempt in 1...promptAttempts {
            let code = try promptLine("Code from the app, to confirm: ", hidden: false, what: "code")
            switch try connection.call("account.totp_confirm", ["code": .string(code)]) {
            case .success:
                return confirmed(context)
            case .failure(let error) where error.reason == "invalid_code" && attempt < promptAttempts:
                writeError("rosterctl: \(error.message) (\(error.reason)); try the app's next code")
            case .failure(let error):
                throw failure("account totp enroll", error)
            }
        }
        return pending()
    }

    /// `account totp confirm`: the code of a pending enrolment, from stdin, `$ROSTER_CODE` or a prompt.
    static func confirm(passwordStdin: Bool, _ context: VerbContext) throws -> Int32 {
        let code = try readSecret(.oneTimeCode, passwordStdin: passwordStdin, context: context, verb: "account totp confirm")
        return try confirm(code, context.connectLoggedIn(), context)
    }

    static func disable(passwordStdin: Bool, _ context: VerbContext) throws -> Int32 {
        _ = try AccountActions.callWithPassword("account.totp_disable", passwordStdin: passwordStdin,
                                                verb: "account totp disable", context)
        if context.json != nil { context.printJSON(["totp": false]) } else { printLine("two-step log-in is off") }
        return 0
    }

    private static func confirm(_ code: String, _ connection: ClientConnection, _ context: VerbContext) throws -> Int32 {
        _ = try connection.result("account.totp_confirm", ["code": .string(code)], verb: "account totp confirm")
        return confirmed(context)
    }

    private static func confirmed(_ context: VerbContext) -> Int32 {
        if context.json != nil { context.printJSON(["totp": true]) } else { printLine("two-step log-in is on: log-ins now need a code") }
        return 0
    }

    private static func pending() -> Int32 {
        writeError("rosterctl: not confirmed yet; confirm with a code: rosterctl account totp confirm")
        return 0
    }
}
