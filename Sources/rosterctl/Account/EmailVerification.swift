import Glibc
import RosterClient
import RosterProtocol

/// `rosterctl account verify-email [--code CODE]`: proves the account's email is its own with a mailed code.
enum EmailVerification {
    /// Wrong codes a person may type at the prompt before the command gives up (each one counts as a failed log-in
    /// at the daemon, and five kill the code, so the prompt does not loop for ever).
    static let promptAttempts = 3
    static let verb = "account verify-email"

    /// With a code, verifies at once. Without one, asks the daemon to mail a code, then on a terminal asks for it;
    /// a script is told to come back with `--code`. A code mailed less than a minute ago is still good, so the
    /// daemon's `rate_limited` for a new one still leads to the prompt.
    static func run(code: String?, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        if let code {
            return verified(try connection.result("account.email_verify", ["code": .string(code)], verb: verb), context)
        }
        let terminal = isatty(0) == 1
        switch try connection.call("account.email_verify_send") {
        case .success(let result):
            writeError("rosterctl: a code is on its way to the account's email")
            if !terminal { return sentOnly(result, context) }
        case .failure(let error) where error.reason == "rate_limited" && terminal:
            writeError("rosterctl: \(error.message) (\(error.reason)); the code mailed last is still good")
        case .failure(let error):
            throw failure(verb, error)
        }
        for attempt in 1...promptAttempts {
            let typed = try promptLine("Code from the mail: ", hidden: false, what: "code")
            switch try connection.call("account.email_verify", ["code": .string(typed)]) {
            case .success(let result):
                return verified(result, context)
            case .failure(let error) where error.reason == "invalid_code" && attempt < promptAttempts:
                writeError("rosterctl: \(error.message) (\(error.reason)); try again")
            case .failure(let error):
                throw failure(verb, error)
            }
        }
        return 1
    }

    /// The mail is on its way and nobody is there to type the code: the command that finishes the job.
    private static func sentOnly(_ result: JSONValue, _ context: VerbContext) -> Int32 {
        if context.json != nil { context.printJSON(result) }
        writeError("rosterctl: verify with the mailed code: rosterctl account verify-email --code CODE")
        return 0
    }

    private static func verified(_ result: JSONValue, _ context: VerbContext) -> Int32 {
        if context.json != nil { context.printJSON(result) } else { printLine("email verified") }
        return 0
    }
}
