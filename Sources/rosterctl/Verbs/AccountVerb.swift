import Glibc

/// What `rosterctl account …` was asked to do, parsed from its arguments.
enum AccountCommand: Equatable {
    case show
    /// The interactive password form on a terminal; else current and new password from stdin or the environment.
    case password(passwordStdin: Bool)
    /// `""` removes the email.
    case email(String, passwordStdin: Bool)
    /// `yes` skips typing the username (and is what lets a script delete at all).
    case delete(yes: Bool, passwordStdin: Bool)
    /// nil writes to stdout.
    case export(output: String?)
    case recoveryCodes(passwordStdin: Bool)
    case totpEnroll(passwordStdin: Bool)
    case totpConfirm(passwordStdin: Bool)
    case totpDisable(passwordStdin: Bool)
    /// nil mails a code first (and asks for it on a terminal); a code verifies at once.
    case verifyEmail(code: String?)
}

/// `rosterctl account`: the logged-in user's own account, from its details to its deletion.
struct AccountVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "account", usage: "account COMMAND [ARGUMENTS...]",
        summary: "Show and change the logged-in user's account", group: .account,
        options: [("--password-stdin", "Read the secrets from stdin, one per line (see rosterctl(1) for the order)"),
                  ("--yes", "delete: do not ask to type the username (needed without a terminal)"),
                  ("--code CODE", "verify-email: the code from the mail, instead of mailing one and asking for it"),
                  ("--output FILE", "export: write to FILE, which must not exist yet (default: stdout)")],
        actions: [(usages.show, "Show the username, email (verified or not), creation time, TOTP and recovery codes left"),
                  (usages.password, "Change the password (an interactive form on a terminal)"),
                  (usages.email, "Change the email; \"\" removes it (asks for the password)"),
                  (usages.verifyEmail, "Verify the email: mail a code, then type it (or give it with --code)"),
                  (usages.delete, "Delete the account, its contacts and sessions for good"),
                  (usages.export, "Print everything stored about the account as JSON (no secrets)"),
                  (usages.recoveryCodes, "Make 10 new single-use recovery codes (replacing older ones)"),
                  (usages.totpEnroll, "Turn on two-step log-in: print the otpauth:// URI (and a QR code)"),
                  (usages.totpConfirm, "Confirm a pending enrolment with a code (for scripts)"),
                  (usages.totpDisable, "Turn two-step log-in off (asks for the password)")])

    static let usages = (
        show: "account show",
        password: "account password [--password-stdin]",
        email: "account email ADDRESS [--password-stdin]",
        verifyEmail: "account verify-email [--code CODE]",
        delete: "account delete [--yes] [--password-stdin]",
        export: "account export [--output FILE]",
        recoveryCodes: "account recovery-codes [--password-stdin]",
        totpEnroll: "account totp enroll [--password-stdin]",
        totpConfirm: "account totp confirm [--password-stdin]",
        totpDisable: "account totp disable [--password-stdin]")

    let command: AccountCommand

    init(arguments: [String]) throws(UsageError) {
        command = try AccountVerb.parse(arguments)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> AccountCommand {
        guard let action = arguments.first else { throw UsageError(description: "usage: rosterctl \(configuration.usage)") }
        let rest = Array(arguments.dropFirst())
        switch action {
        case "show":
            _ = try VerbArguments(rest, verb: "account show").positionals(min: 0, max: 0, verb: "account show", usage: usages.show)
            return .show
        case "password":
            return .password(passwordStdin: try passwordStdinOnly(rest, "account password", usages.password))
        case "email":
            let parsed = try VerbArguments(rest, verb: "account email", flags: ["--password-stdin"])
            let words = try parsed.positionals(min: 1, max: 1, verb: "account email", usage: usages.email)
            return .email(words[0], passwordStdin: parsed.flags.contains("--password-stdin"))
        case "verify-email":
            let parsed = try VerbArguments(rest, verb: "account verify-email", valued: ["--code"])
            _ = try parsed.positionals(min: 0, max: 0, verb: "account verify-email", usage: usages.verifyEmail)
            // Unlike a password, a verification code may be an argument: it proves only that the mail arrived,
            // works once, and the account it verifies is already the logged-in one.
            let code = parsed.values["--code"]
            if code == "" { throw UsageError(description: "account verify-email: --code needs the code from the mail") }
            return .verifyEmail(code: code)
        case "delete":
            let parsed = try VerbArguments(rest, verb: "account delete", flags: ["--password-stdin", "--yes"])
            _ = try parsed.positionals(min: 0, max: 0, verb: "account delete", usage: usages.delete)
            return .delete(yes: parsed.flags.contains("--yes"), passwordStdin: parsed.flags.contains("--password-stdin"))
        case "export":
            let parsed = try VerbArguments(rest, verb: "account export", valued: ["--output"])
            _ = try parsed.positionals(min: 0, max: 0, verb: "account export", usage: usages.export)
            let output = parsed.values["--output"]
            if output == "" { throw UsageError(description: "account export: --output needs a file name") }
            return .export(output: output == "-" ? nil : output)
        case "recovery-codes":
            return .recoveryCodes(passwordStdin: try passwordStdinOnly(rest, "account recovery-codes", usages.recoveryCodes))
        case "totp":
            guard let step = rest.first else { throw UsageError(description: "usage: rosterctl account totp enroll|confirm|disable") }
            let tail = Array(rest.dropFirst())
            switch step {
            case "enroll": return .totpEnroll(passwordStdin: try passwordStdinOnly(tail, "account totp enroll", usages.totpEnroll))
            case "confirm": return .totpConfirm(passwordStdin: try passwordStdinOnly(tail, "account totp confirm", usages.totpConfirm))
            case "disable": return .totpDisable(passwordStdin: try passwordStdinOnly(tail, "account totp disable", usages.totpDisable))
            default: throw UsageError(description: "account totp: unknown command '\(step)'; use enroll, confirm or disable")
            }
        default:
            throw UsageError(description: "account: unknown command '\(action)'; use show, password, email, verify-email, "
                + "delete, export, recovery-codes or totp (see rosterctl account --help)")
        }
    }

    /// Parses an action that takes no positionals and at most `--password-stdin`, returning whether it was given.
    private static func passwordStdinOnly(_ arguments: [String], _ verb: String, _ usage: String) throws(UsageError) -> Bool {
        let parsed = try VerbArguments(arguments, verb: verb, flags: ["--password-stdin"])
        _ = try parsed.positionals(min: 0, max: 0, verb: verb, usage: usage)
        return parsed.flags.contains("--password-stdin")
    }

    /// Scripts must say what they mean before anything is asked or sent (exit 2).
    func validate(_ context: VerbContext) throws(UsageError) {
        let interactive = canRunInteractively(environment: context.environment)
        func needs(_ secret: Secret, _ passwordStdin: Bool, _ verb: String) throws(UsageError) {
            guard SecretSource.choose(secret, passwordStdin: passwordStdin, environment: context.environment) != nil else {
                throw UsageError(description: secret.missing(verb: verb))
            }
        }
        switch command {
        case .show, .export, .verifyEmail:
            return
        case .password(let passwordStdin):
            guard passwordStdin || !interactive else { return }
            try needs(.currentPassword, passwordStdin, "account password")
            try needs(.newPassword, passwordStdin, "account password")
        case .email(_, let passwordStdin):
            try needs(.password, passwordStdin, "account email")
        case .delete(let yes, let passwordStdin):
            guard yes || isatty(0) == 1 else {
                throw UsageError(description: "account delete: without a terminal to type the username on, pass --yes")
            }
            try needs(.password, passwordStdin, "account delete")
        case .recoveryCodes(let passwordStdin):
            try needs(.password, passwordStdin, "account recovery-codes")
        case .totpEnroll(let passwordStdin):
            try needs(.password, passwordStdin, "account totp enroll")
        case .totpConfirm(let passwordStdin):
            try needs(.oneTimeCode, passwordStdin, "account totp confirm")
        case .totpDisable(let passwordStdin):
            try needs(.password, passwordStdin, "account totp disable")
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        switch command {
        case .show: return try AccountActions.show(context)
        case .password(let passwordStdin): return try PasswordChange.run(passwordStdin: passwordStdin, context)
        case .email(let email, let passwordStdin): return try AccountActions.changeEmail(email, passwordStdin: passwordStdin, context)
        case .delete(let yes, let passwordStdin): return try AccountActions.delete(yes: yes, passwordStdin: passwordStdin, context)
        case .export(let output): return try AccountExport.run(output: output, context)
        case .recoveryCodes(let passwordStdin): return try AccountActions.recoveryCodes(passwordStdin: passwordStdin, context)
        case .totpEnroll(let passwordStdin): return try TOTPEnrolment.enroll(passwordStdin: passwordStdin, context)
        case .totpConfirm(let passwordStdin): return try TOTPEnrolment.confirm(passwordStdin: passwordStdin, context)
        case .totpDisable(let passwordStdin): return try TOTPEnrolment.disable(passwordStdin: passwordStdin, context)
        case .verifyEmail(let code): return try EmailVerification.run(code: code, context)
        }
    }
}
