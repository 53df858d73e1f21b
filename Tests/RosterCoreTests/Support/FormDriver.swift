import Testing
import RosterCore

/// A runtime stand-in on a manual clock: performs timer and check actions the way the loop would, and
/// records every action so tests can assert the whole history.
struct FormDriver<Rules: FormRulebook> {
    var form: FormKernel<Rules>
    private(set) var now = Instant.zero
    private(set) var timers: [FormTimer: Instant] = [:]
    private(set) var checks: [CheckToken: Check] = [:]
    private(set) var history: [FormAction] = []
    private var unread = 0

    init(_ form: FormKernel<Rules>) { self.form = form }

    /// Actions since the previous `take()`.
    mutating func take() -> [FormAction] {
        defer { unread = history.count }
        return Array(history[unread...])
    }

    @discardableResult
    mutating func type(_ field: FieldName, _ value: String) throws(RosterError) -> Int {
        let (rev, actions) = try form.inputReceived(field: field, value: value, now: now)
        perform(actions)
        return rev
    }

    /// Moves the clock to `ms`, firing due timers in deadline order at their own deadlines.
    mutating func advance(to ms: Int64) {
        let target = Instant.milliseconds(ms)
        // Ties fire in the form's field order, so that expected histories are deterministic.
        func rank(_ timer: FormTimer) -> Int {
            switch timer {
            case .debounce(let field): Rules.Field.allCases.firstIndex { $0.name == field } ?? 0
            }
        }
        while let (timer, at) = timers.filter({ $0.value <= target })
            .min(by: { ($0.value, rank($0.key)) < ($1.value, rank($1.key)) }) {
            now = at
            timers[timer] = nil
            perform(form.timerFired(timer, now: at))
        }
        now = target
    }

    mutating func answer(_ token: CheckToken, _ result: CheckResult) {
        checks[token] = nil
        perform(form.checkCompleted(token: token, result: result, now: now))
    }

    /// Answers a token even if it was cancelled, as a slow store would.
    mutating func answerLate(_ token: CheckToken, _ result: CheckResult) {
        perform(form.checkCompleted(token: token, result: result, now: now))
    }

    mutating func submit() { perform(form.submitRequested(now: now)) }

    mutating func complete(_ result: Result<String, RosterError>) { perform(form.submitCompleted(result)) }

    mutating func perform(_ actions: [FormAction]) {
        history += actions
        for action in actions {
            switch action {
            case .schedule(let timer, let at): timers[timer] = at
            case .cancelTimer(let timer): timers[timer] = nil
            case .startCheck(let check, let token): checks[token] = check
            case .cancelCheck(let token): checks[token] = nil
            case .emit, .register, .login, .changePassword, .finishSubmit: break
            }
        }
    }
}

/// A seed-policy register form with username, password and confirm valid (submittable), history cleared; its
/// username check was token 1, so the next check is token 2.
func filledRegisterDriver() throws -> FormDriver<RegisterRulebook> {
    var driver = FormDriver(RegisterForm(policy: .seed, debounce: .milliseconds(500)))
    try driver.type(.username, "alice1")
    driver.advance(to: 500)
    driver.answer(token(1), .available)
    try driver.type(.password, "secret1")
    driver.advance(to: 1000)
    try driver.type(.confirm, "secret1")
    driver.advance(to: 1500)
    #expect(driver.form.snapshot.submittable)
    _ = driver.take()
    return driver
}

/// Shorthands for expected actions.
func fieldEvent(_ field: FieldName, _ state: FieldState, _ code: FieldCode, enabled: Bool = true, rev: Int,
                form: FormName = .register) -> FormAction {
    .emit(.field(form: form, field: field, state: state, code: code, enabled: enabled, rev: rev))
}

func submittable(_ value: Bool, form: FormName = .register) -> FormAction {
    .emit(.form(form: form, submittable: value))
}

func submitEvent(_ state: SubmitState, _ code: SubmitCode, form: FormName = .register) -> FormAction {
    .emit(.submit(form: form, state: state, code: code))
}

func debounce(_ field: FieldName, at ms: Int64) -> FormAction {
    .schedule(.debounce(field), at: .milliseconds(ms))
}

func token(_ value: UInt64) -> CheckToken { CheckToken(value) }
