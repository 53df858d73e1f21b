import RosterCore
import RosterRuntime
import RosterProtocol
import RosterCrypto
import RosterStore

/// An open form as a session holds it, whatever its kind.
protocol OpenForm: AnyObject {
    var snapshot: FormSnapshot { get }
    func input(field: FieldName, value: String) throws(RosterError) -> Int
    /// Called after the `form.input` answer went out, so events follow the answer they belong to.
    func performPendingInput()
    func submit(_ call: Call)
    func close()
    func policyChanged(_ policy: Policy)
    func accountRegistered(username: String, email: String?)
    /// Whether a submit is running, which a second `form.submit` joins.
    var isSubmitting: Bool { get }
}

extension OpenForm {
    var isSubmitting: Bool { false }
}

/// Binds one form machine to the loop: it performs the machine's actions against the loop's timers, the
/// user database and the worker pool, and feeds every outcome back in as a new fact.
///
/// Facts are handled one at a time and each action list is performed whole before the next fact (a database
/// check answers at once, but its answer waits its turn in `facts`), which is the order the machine expects.
final class FormRunner<Machine: FormMachine>: OpenForm {
    private enum Fact {
        case timer(FormTimer)
        case check(CheckToken, CheckResult)
        case submit
        case submitCompleted(Result<String, RosterError>)
        case registered(username: String, email: String?)
    }

    private var machine: Machine
    private unowned let server: Server
    private unowned let connection: Connection
    private var timers: [FormTimer: Scheduled] = [:]
    private var waitingSubmits: [Call] = []
    private var facts: [Fact] = []
    private var inputActions: [FormAction] = []
    private var isRunning = false
    private var isClosed = false
    /// The bearer token made by this form's successful submit, for its answer.
    private var issuedToken: String?

    init(machine: Machine, server: Server, connection: Connection) {
        self.machine = machine
        self.server = server
        self.connection = connection
    }

    var snapshot: FormSnapshot { machine.snapshot }

    var isSubmitting: Bool { !waitingSubmits.isEmpty }

    func input(field: FieldName, value: String) throws(RosterError) -> Int {
        machine.debounce = connection.session.debounce(under: server.config.policy)
        let (rev, actions) = try machine.inputReceived(field: field, value: value, now: server.loop.now)
        inputActions += actions
        return rev
    }

    func performPendingInput() {
        let actions = inputActions
        inputActions = []
        run { self.perform(actions) }
    }

    func submit(_ call: Call) {
        waitingSubmits.append(call)
        feed(.submit)
    }

    func policyChanged(_ policy: Policy) { machine.policyChanged(policy) }

    func accountRegistered(username: String, email: String?) { feed(.registered(username: username, email: email)) }

    func close() {
        guard !isClosed else { return }
        _ = machine.close()
        isClosed = true
        for timer in timers.values { timer.cancel() }
        timers = [:]
        facts = []
        let waiting = waitingSubmits
        waitingSubmits = []
        for call in waiting { call.fail(.formNotOpen(form: Machine.form.rawValue)) }
    }

    // MARK: Facts in

    private func feed(_ fact: Fact) {
        guard !isClosed else { return }
        facts.append(fact)
        run {}
    }

    /// Runs `body`, then every queued fact, unless a run is already under way further up the stack.
    private func run(_ body: () -> Void) {
        guard !isRunning else {
            body()
            return
        }
        isRunning = true
        defer { isRunning = false }
        body()
        while !isClosed, !facts.isEmpty {
            perform(apply(facts.removeFirst()))
        }
    }

    private func apply(_ fact: Fact) -> [FormAction] {
        let now = server.loop.now
        switch fact {
        case .timer(let timer): return machine.timerFired(timer, now: now)
        case .check(let token, let result): return machine.checkCompleted(token: token, result: result, now: now)
        case .submit: return machine.submitRequested(now: now)
        case .submitCompleted(let result): return machine.submitCompleted(result)
        case .registered(let username, let email): return machine.accountRegistered(username: username, email: email)
        }
    }

    // MARK: Actions out

    private func perform(_ actions: [FormAction]) {
        for action in actions {
            guard !isClosed else { return }
            perform(action)
        }
    }

    private func perform(_ action: FormAction) {
        switch action {
        case .schedule(let timer, let deadline):
            timers[timer]?.cancel()
            timers[timer] = server.loop.schedule(at: deadline) { [weak self] in
                self?.timers[timer] = nil
                self?.feed(.timer(timer))
            }
        case .cancelTimer(let timer):
            timers.removeValue(forKey: timer)?.cancel()
        case .emit(let event):
            server.sendFormEvent(event, to: connection)
        case .startCheck(let check, let token):
            startCheck(check, token: token)
        case .cancelCheck:
            // Database checks have already answered; a quality check runs out on its worker and is then dropped.
            break
        case .register(let username, let password, let email):
            register(username: username, password: password, email: email)
        case .login(let identifier, let password):
            login(identifier: identifier, password: password)
        case .finishSubmit(let result):
            finishSubmit(result)
        }
    }

    private func startCheck(_ check: Check, token: CheckToken) {
        let accounts = server.accounts
        switch check {
        case .usernameAvailable(let canonical): facts.append(.check(token, accounts.usernameAvailability(canonical)))
        case .emailAvailable(let canonical): facts.append(.check(token, accounts.emailAvailability(canonical)))
        case .accountExists(let canonical): facts.append(.check(token, accounts.accountExistence(canonical)))
        case .passwordQuality(let password, let username):
            accounts.checkQuality(password: password, username: username, charge: connection.queueCharge) { [weak self] result in
                self?.feed(.check(token, result))
            }
        }
    }

    private func register(username: String, password: Secret, email: String?) {
        server.accounts.register(username: username, password: password, email: email,
                                 charge: connection.queueCharge) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let user):
                self.server.accountRegistered(user, by: self.connection.peer, from: self)
                self.logIn(user)
            case .failure(let error):
                self.feed(.submitCompleted(.failure(error)))
            }
        }
    }

    private func login(identifier: String, password: Secret) {
        server.accounts.login(identifier: identifier, password: password, peerUID: connection.peer.uid,
                              charge: connection.queueCharge) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let user): self.logIn(user)
            case .failure(let error): self.feed(.submitCompleted(.failure(error)))
            }
        }
    }

    /// Registration and log-in both end here: a token for the CLI to resume with, then the session is the user's.
    private func logIn(_ user: UserRecord) {
        server.accounts.issueToken(for: user, charge: connection.queueCharge) { [weak self] token in
            guard let self else { return }
            if case .success(let bearer) = token {
                self.issuedToken = bearer
                self.server.logIn(self.connection, as: user, tokenHash: SessionToken.hash(bearer: bearer))
            } else {
                // The account is real either way; without a stored token the session still logs in.
                self.server.logIn(self.connection, as: user, tokenHash: nil)
            }
            self.feed(.submitCompleted(.success(user.canonical)))
        }
    }

    private func finishSubmit(_ result: Result<SubmitOutcome, RosterError>) {
        let waiting = waitingSubmits
        waitingSubmits = []
        for call in waiting {
            switch result {
            case .success(.registered(let username)), .success(.loggedIn(let username)):
                call.succeed(["username": .string(username), "token": .optional(issuedToken)])
            case .failure(let error):
                call.fail(error)
            }
        }
        issuedToken = nil
    }
}
