import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// An open form as a session holds it, whatever its kind.
protocol RunningForm: AnyObject {
    var snapshot: FormSnapshot { get }
    func input(field: FieldName, value: String) throws(RosterError) -> Int
    /// Called after the `form.input` answer went out, so events follow the answer they belong to.
    func performPendingInput()
    /// A `form.submit`, answered through `answer` once it is done (or at once, when the form cannot submit).
    func submit(answer: @escaping (Result<JSONValue, RosterError>) -> Void)
    func close()
    func policyChanged(_ policy: Policy)
    func accountRegistered(username: String, email: String?)
    /// Another daemon's writes may have changed what the storage answered this form (see `StoreChange`).
    func storeChanged(_ change: StoreChange)
    /// Whether a submit is running, which a second `form.submit` joins.
    var isSubmitting: Bool { get }
}

extension RunningForm {
    var isSubmitting: Bool { false }
}

/// Binds one register, log-in or password form (`FormKernel<Rules>`) to its environment: it performs the form's
/// actions against the scheduler's timers and the account procedures, and feeds every outcome back in as a new
/// fact through a `MachineDriver`.
///
/// The driver steps facts one at a time and performs each action list whole before the next fact: a check the
/// storage answers before its call returns waits its turn, like one that answers later, which is the order the
/// form expects. A check that answers after a newer input carries an old token, and the form drops it; one that
/// answers after the form closed meets a stopped driver.
final class FormRunner<Rules: FormRulebook>: RunningForm {
    private enum Fact {
        case timer(FormTimer)
        case check(CheckToken, CheckResult)
        case submit
        case submitCompleted(Result<String, RosterError>)
        case registered(username: String, email: String?)
        case storeChanged(StoreChange)
    }

    /// How a waiting `form.submit` is answered.
    typealias SubmitAnswer = (Result<JSONValue, RosterError>) -> Void

    private var machine: FormKernel<Rules>
    private let environment: FormEnvironment
    private var session: any FormSession { environment.session }
    private lazy var driver: MachineDriver<Fact, FormAction> = {
        let driver = MachineDriver<Fact, FormAction> { [unowned self] fact in self.step(fact) }
        driver.perform = { [unowned self] action, _ in self.perform(action) }
        return driver
    }()
    private let timers: KeyedTimers<FormTimer>
    private var waitingSubmits: [SubmitAnswer] = []
    /// What an input returned, performed once its answer went out.
    private var inputActions: [FormAction] = []
    /// The bearer token made by this form's successful submit, for its answer.
    private var issuedToken: String?
    /// How many other sessions' tokens this form's password change revoked, for its answer.
    private var revokedCount = 0

    init(machine: FormKernel<Rules>, environment: FormEnvironment) {
        self.machine = machine
        self.environment = environment
        self.timers = KeyedTimers(on: environment.scheduler)
    }

    var snapshot: FormSnapshot { machine.snapshot }

    var isSubmitting: Bool { !waitingSubmits.isEmpty }

    func input(field: FieldName, value: String) throws(RosterError) -> Int {
        machine.debounce = session.debounce
        let (rev, actions) = try machine.inputReceived(field: field, value: value, now: environment.scheduler.now)
        inputActions += actions
        return rev
    }

    func performPendingInput() {
        let actions = inputActions
        inputActions = []
        driver.perform(actions)
    }

    /// A `form.submit`, answered once the submit it starts (or joins) is done.
    func submit(answer: @escaping SubmitAnswer) {
        waitingSubmits.append(answer)
        driver.feed(.submit)
    }

    func policyChanged(_ policy: Policy) { machine.policyChanged(policy) }

    func accountRegistered(username: String, email: String?) {
        driver.feed(.registered(username: username, email: email))
    }

    func storeChanged(_ change: StoreChange) { driver.feed(.storeChanged(change)) }

    /// The form forgets its timers and checks and the driver stops; the runner releases every timer it holds
    /// itself (an answer still out meets the stopped driver), so the form's own cancels are not needed.
    func close() {
        guard !driver.isStopped else { return }
        _ = machine.close()
        driver.stop()
        timers.cancelAll()
        let waiting = waitingSubmits
        waitingSubmits = []
        for answer in waiting { answer(.failure(.formNotOpen(form: Rules.form.rawValue))) }
    }

    // MARK: Facts in

    private func step(_ fact: Fact) -> [FormAction] {
        let now = environment.scheduler.now
        switch fact {
        case .timer(let timer): return machine.timerFired(timer, now: now)
        case .check(let token, let result): return machine.checkCompleted(token: token, result: result, now: now)
        case .submit: return machine.submitRequested(now: now)
        case .submitCompleted(let result): return machine.submitCompleted(result)
        case .registered(let username, let email): return machine.accountRegistered(username: username, email: email)
        case .storeChanged(let change): return machine.storeChanged(change)
        }
    }

    // MARK: Actions out

    private func perform(_ action: FormAction) {
        switch action {
        case .schedule(let timer, let deadline):
            timers.set(timer, at: deadline) { [weak self] in self?.driver.feed(.timer(timer)) }
        case .cancelTimer(let timer):
            timers.cancel(timer)
        case .emit(let event):
            session.emit(event)
        case .startCheck(let check, let token):
            startCheck(check, token: token)
        case .cancelCheck:
            // A check that is out runs to its end and its answer is dropped by token; asking the storage to stop
            // one would cost more than the answer.
            break
        case .register(let username, let password, let email):
            register(username: username, password: password, email: email)
        case .login(let identifier, let password, let code):
            login(identifier: identifier, password: password, code: code)
        case .changePassword(let current, let new):
            changePassword(current: current, new: new)
        case .finishSubmit(let result):
            finishSubmit(result)
        }
    }

    private func startCheck(_ check: Check, token: CheckToken) {
        environment.accounts.check(check, charge: session.queueCharge) { [weak self] result in
            self?.driver.feed(.check(token, result))
        }
    }

    private func register(username: String, password: Secret, email: String?) {
        let registration = Registration<Account>(judged: RegistrationRequest(username: username, password: password,
                                                                             email: email), issuesToken: true)
        environment.accounts.register(registration, peer: session.peer, charge: session.queueCharge,
                                      locale: session.locale, announce: { [weak self] account in
            guard let self else { return }
            self.session.registered(account, by: self)
        }, completion: { [weak self] result in
            self?.submitted(result.map { ($0.account, $0.token) })
        })
    }

    private func login(identifier: String, password: Secret, code: String?) {
        environment.accounts.logIn(LogInRequest(identifier: identifier, password: password, code: code),
                                   peer: session.peer, charge: session.queueCharge) { [weak self] result in
            self?.submitted(result.map { ($0.account, $0.token) })
        }
    }

    /// The session's user changes its password, keeping this session's token; the sessions of every token the
    /// change revoked end (on every connection), before the form hears it succeeded.
    private func changePassword(current: Secret, new: Secret) {
        // The server closes a password form when its session's user changes, so this is the user it opened for.
        guard let user = session.user else { return driver.feed(.submitCompleted(.failure(.unauthenticated))) }
        environment.accounts.changePassword(of: user, current: current, new: new, keeping: session.tokenHash,
                                            peer: session.peer, charge: session.queueCharge,
                                            locale: session.locale) { [weak self, session] result in
            // The password changed even if the form closed meanwhile: the revoked tokens' sessions end anyway.
            if case .success(let revoked) = result { session.tokensRevoked(revoked) }
            guard let self else { return }
            switch result {
            case .success(let revoked):
                revokedCount = revoked.count
                driver.feed(.submitCompleted(.success(user.username)))
            case .failure(let error):
                driver.feed(.submitCompleted(.failure(error)))
            }
        }
    }

    /// Registration and log-in both end here: the session is the user's, with a token for the CLI to resume with
    /// when one could be stored. A token that could not be stored leaves the session logged in without one
    /// (`token: null` in the answer): the account is real either way.
    private func submitted(_ result: Result<(Account, Result<IssuedToken, RosterError>?), RosterError>) {
        switch result {
        case .success(let (account, token)):
            let issued: IssuedToken?
            switch token {
            case .success(let stored)?: issued = stored
            case .failure?, nil: issued = nil
            }
            issuedToken = issued?.bearer
            session.loggedIn(as: account, tokenHash: issued?.hash)
            driver.feed(.submitCompleted(.success(account.username)))
        case .failure(let error):
            driver.feed(.submitCompleted(.failure(error)))
        }
    }

    private func finishSubmit(_ result: Result<SubmitOutcome, RosterError>) {
        let waiting = waitingSubmits
        waitingSubmits = []
        for answer in waiting {
            switch result {
            case .success(.registered(let username)), .success(.loggedIn(let username)):
                answer(.success(["username": .string(username), "token": .optional(issuedToken)]))
            case .success(.passwordChanged):
                answer(.success(["revoked": .int(revokedCount)]))
            case .failure(let error):
                answer(.failure(error))
            }
        }
        issuedToken = nil
    }
}
