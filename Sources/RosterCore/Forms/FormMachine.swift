// The register, log-in and password form machines, sans I/O. Where each concern lives:
//   FormMachine.swift        this protocol: the facts a runner feeds a form and the actions it gets back
//   RegisterForm.swift       the register form's rules, theory of operation and rulebook
//   LoginForm.swift          the log-in form's rules and rulebook
//   PasswordForm.swift       the password form's rules and rulebook (a logged-in session's password change)
//   FormKernel.swift         timing and emission shared by all three: debounce, flatMapLatest, diffs, submit
//   FormRulebook.swift       what a form must say about its own fields for the kernel to run it
//   FormField.swift          a form's own field enum (RegisterField.swift, LoginField.swift, PasswordField.swift)
//                            and its codes
//   FormAndFieldNames.swift  the wire names of forms and fields, which the forms map at their edge
//   FieldSlot.swift          one field's input, rev, phase and what its client was last told
//   FieldTable.swift         a form's slots, keyed by its own field enum
//   Check.swift              the questions only the runtime can answer, their answers and verdicts
//   CheckToken.swift         the token that lets a late answer be dropped
//   FormAction.swift         what a form asks the runtime to do (timers, checks, register, log in, change the
//                            password, answer)
//   FormEvent.swift          what a form tells its client (field, form and submit events)
//   SubmitCode.swift         submit codes, and the one table from an error to the code it shows
//   FormSnapshot.swift       the `form.open` answer
//   FormEventText.swift      an event's localized message and its placeholder values
//   FormMessages.swift       the texts of every field and submit code, per locale
// Field verdicts and codes (FieldVerdict, FieldCode) and the per-field rules are in ../Rules; the contacts
// form, a throttle rather than a set of fields, is ../Contacts/ContactsForm.swift.

/// What the runtime needs from a form's view model, so one runner drives the register, log-in and password forms
/// alike.
public protocol FormMachine: Sendable {
    /// The form's own fields; `inputReceived` answers `unknown_field` for a wire name outside them.
    associatedtype Field: FormField
    static var form: FormName { get }
    var snapshot: FormSnapshot { get }
    var debounce: Duration { get set }
    mutating func inputReceived(field: FieldName, value: String, now: Instant) throws(RosterError)
        -> (rev: Int, actions: [FormAction])
    mutating func timerFired(_ timer: FormTimer, now: Instant) -> [FormAction]
    mutating func checkCompleted(token: CheckToken, result: CheckResult, now: Instant) -> [FormAction]
    mutating func submitRequested(now: Instant) -> [FormAction]
    /// The store's answer to `.register`, `.login` or `.changePassword`: the canonical username, or why it failed.
    mutating func submitCompleted(_ result: Result<String, RosterError>) -> [FormAction]
    mutating func policyChanged(_ policy: Policy)
    mutating func close() -> [FormAction]
    /// Any session registered this account; a form holding the name or email reacts (live `taken`).
    mutating func accountRegistered(username: String, email: String?) -> [FormAction]
    /// The store may have changed under the form's verdicts (another daemon's writes); the fields it concerns are
    /// asked again, and only a changed answer is told.
    mutating func storeChanged(_ change: StoreChange) -> [FormAction]
}

extension RegisterForm: FormMachine {
    public mutating func submitCompleted(_ result: Result<String, RosterError>) -> [FormAction] {
        registrationCompleted(result)
    }

    public mutating func accountRegistered(username: String, email: String?) -> [FormAction] {
        usernameRegistered(canonical: username) + (email.map { emailRegistered(canonical: $0) } ?? [])
    }
}

extension LoginForm: FormMachine {
    public mutating func submitCompleted(_ result: Result<String, RosterError>) -> [FormAction] {
        loginCompleted(result)
    }

    /// A log-in form already shows what it knew when it checked; a new account changes nothing it promised.
    public mutating func accountRegistered(username: String, email: String?) -> [FormAction] { [] }
}

extension PasswordForm: FormMachine {
    public mutating func submitCompleted(_ result: Result<String, RosterError>) -> [FormAction] {
        passwordChangeCompleted(result)
    }

    /// A password form asks the store nothing, so neither a new account nor another daemon's writes concern it.
    public mutating func accountRegistered(username: String, email: String?) -> [FormAction] { [] }

    public mutating func storeChanged(_ change: StoreChange) -> [FormAction] { [] }
}
