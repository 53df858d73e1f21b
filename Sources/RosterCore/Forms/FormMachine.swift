/// What the runtime needs from a form's view model, so one runner drives the register and log-in forms alike.
public protocol FormMachine: Sendable {
    static var form: FormName { get }
    var snapshot: FormSnapshot { get }
    var debounce: Duration { get set }
    mutating func inputReceived(field: FieldName, value: String, now: Instant) throws(RosterError)
        -> (rev: Int, actions: [FormAction])
    mutating func timerFired(_ timer: FormTimer, now: Instant) -> [FormAction]
    mutating func checkCompleted(token: CheckToken, result: CheckResult, now: Instant) -> [FormAction]
    mutating func submitRequested(now: Instant) -> [FormAction]
    /// The store's answer to `.register` or `.login`: the canonical username, or why it failed.
    mutating func submitCompleted(_ result: Result<String, RosterError>) -> [FormAction]
    mutating func policyChanged(_ policy: Policy)
    mutating func close() -> [FormAction]
    /// Any session registered this account; a form holding the name or email reacts (live `taken`).
    mutating func accountRegistered(username: String, email: String?) -> [FormAction]
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
