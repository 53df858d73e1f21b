import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
@testable import RosterServer

/// Argon2id stand-in: a "hash" that names the password, so verifying is a comparison. Answers at once, or holds
/// each answer until the test releases it (work that is still on a worker).
final class FakePasswordWork: PasswordWork {
    enum Answering {
        case immediately
        case onRelease
    }

    var answering: Answering
    /// libpwquality's verdict, for the hardened preset's checks.
    var quality = CheckResult.qualityPassed
    /// Hashes stored with other parameters are upgraded at log-in when this is set.
    var upgradeTo: String?
    private var held: [() -> Void] = []

    init(answering: Answering = .immediately) { self.answering = answering }

    static func hash(of password: String) -> String { "$argon2id$fake$" + password }

    var pendingCount: Int { held.count }

    @discardableResult
    func releaseNext() -> Bool {
        guard !held.isEmpty else { return false }
        held.removeFirst()()
        return true
    }

    private func answer(_ body: @escaping () -> Void) {
        switch answering {
        case .immediately: body()
        case .onRelease: held.append(body)
        }
    }

    func hash(_ password: Secret, charge: QueueCharge, completion: @escaping (Result<String, RosterError>) -> Void) {
        answer { completion(.success(Self.hash(of: password.exposed))) }
    }

    func verify(_ password: Secret, against hash: String?, charge: QueueCharge,
                completion: @escaping (Result<PasswordVerification, RosterError>) -> Void) {
        let upgrade = upgradeTo
        answer {
            guard let hash, hash == Self.hash(of: password.exposed) else { return completion(.success(.refused)) }
            completion(.success(.accepted(upgradedHash: upgrade)))
        }
    }

    func checkQuality(_ password: Secret, username: String, charge: QueueCharge,
                      completion: @escaping (CheckResult) -> Void) {
        let verdict = quality
        answer { completion(verdict) }
    }
}

/// What a form runner did, in order, as its session and its `form.submit` callers saw it.
enum Happening: Equatable, Sendable, CustomStringConvertible {
    case event(FormEvent)
    case registered(String)
    case loggedIn(String, withToken: Bool)
    case submitSucceeded(username: String, withToken: Bool)
    /// The password form's answer.
    case passwordChanged(revoked: Int)
    /// The runner asked the session to end these tokens' sessions.
    case tokensRevoked([[UInt8]])
    case submitFailed(RosterError)

    var description: String {
        switch self {
        case .event(let event): "\(event)"
        case .registered(let name): "registered \(name)"
        case .loggedIn(let name, let token): "logged in \(name)\(token ? " with a token" : "")"
        case .submitSucceeded(let name, let token): "answered \(name)\(token ? " with a token" : "")"
        case .passwordChanged(let revoked): "answered revoked \(revoked)"
        case .tokensRevoked(let hashes): "revoked \(hashes.count) tokens"
        case .submitFailed(let error): "answered \(error.reason)"
        }
    }
}

/// A session that writes down everything a runner tells it.
final class RecordingFormSession: FormSession {
    var debounce: Duration = .milliseconds(500)
    var queueCharge = QueueCharge(payer: .peer(1000), connection: 1)
    var peer = AuditPeer(uid: 1000, pid: 4242, client: nil)
    var locale: RosterLocale = .default
    /// Who the session is, for the password form; a test logs it in by setting these.
    var user: Account?
    var tokenHash: [UInt8]?
    private(set) var history: [Happening] = []
    private var unread = 0

    func emit(_ event: FormEvent) { history.append(.event(event)) }
    func registered(_ account: Account, by form: RunningForm) { history.append(.registered(account.username)) }

    func loggedIn(as account: Account, tokenHash: [UInt8]?) {
        history.append(.loggedIn(account.username, withToken: tokenHash != nil))
    }

    func tokensRevoked(_ hashes: [[UInt8]]) { history.append(.tokensRevoked(hashes)) }

    func answered(_ result: Result<JSONValue, RosterError>) {
        switch result {
        case .success(let value) where value["revoked"] != nil:
            history.append(.passwordChanged(revoked: Int(value["revoked"]?.int64Value ?? -1)))
        case .success(let value):
            history.append(.submitSucceeded(username: value["username"]?.stringValue ?? "",
                                            withToken: value["token"]?.stringValue != nil))
        case .failure(let error):
            history.append(.submitFailed(error))
        }
    }

    /// What happened since the previous `take()`.
    func take() -> [Happening] {
        defer { unread = history.count }
        return Array(history[unread...])
    }
}

/// A register or log-in form runner on a manual clock, an in-memory storage and fake password work.
struct FormRunnerHarness {
    let scheduler = ManualScheduler()
    let clock = ManualWallClock()
    let storage: InMemoryStorage
    let passwords: FakePasswordWork
    let session = RecordingFormSession()
    let accounts: AccountProcedures
    let policy: Policy

    init(policy: Policy = .seed, storage answering: InMemoryStorage.Answering = .immediately,
         passwords passwordAnswering: FakePasswordWork.Answering = .immediately) {
        self.policy = policy
        storage = InMemoryStorage(clock: clock, answering: answering)
        passwords = FakePasswordWork(answering: passwordAnswering)
        accounts = AccountProcedures(storage: storage, passwords: passwords, policy: policy, logger: Logger(level: .emerg),
                                     secrets: testSecrets, clock: clock)
    }

    var environment: FormEnvironment { FormEnvironment(scheduler: scheduler, accounts: accounts, session: session) }

    func registerForm(firstToken: UInt64 = 1) -> FormRunner<RegisterRulebook> {
        FormRunner(machine: RegisterForm(policy: policy, debounce: session.debounce, firstToken: firstToken),
                   environment: environment)
    }

    func loginForm(firstToken: UInt64 = 1) -> FormRunner<LoginRulebook> {
        FormRunner(machine: LoginForm(policy: policy, debounce: session.debounce, firstToken: firstToken),
                   environment: environment)
    }

    /// A password form of the session, which must be logged in (`logIn(_:password:sessions:)`).
    func passwordForm(firstToken: UInt64 = 1) -> FormRunner<PasswordRulebook> {
        FormRunner(machine: PasswordForm(policy: policy, username: session.user?.username ?? "",
                                         debounce: session.debounce, firstToken: firstToken),
                   environment: environment)
    }

    /// An account stored as if registered earlier with `sessions` tokens, the first of them this session's, which
    /// is logged in as it. Answers the account and the tokens' hashes.
    @discardableResult
    func logIn(_ username: String, password: String, sessions: Int = 1) -> (Account, [[UInt8]]) {
        let answering = storage.answering
        storage.answering = .immediately
        defer { storage.answering = answering }
        var created: Account?
        storage.acting(for: .daemon).createAccount(NewAccount(username: username, display: username, email: nil,
                                                              passwordHash: FakePasswordWork.hash(of: password))) { created = try? $0.get() }
        guard let account = created else { preconditionFailure("the in-memory storage refused \(username)") }
        let hashes = (0..<sessions).map { index in [UInt8](repeating: UInt8(index + 1), count: 32) }
        for hash in hashes { storage.acting(for: .daemon).storeToken(hash: hash, for: account.id,
                                                                     client: nil) { _ in } }
        session.user = account
        session.tokenHash = hashes.first
        return (account, hashes)
    }

    /// `form.input` as the server performs it: the answer (the rev), then the actions.
    @discardableResult
    func type<Machine>(_ runner: FormRunner<Machine>, _ field: FieldName, _ value: String) throws -> Int {
        let rev = try runner.input(field: field, value: value)
        runner.performPendingInput()
        return rev
    }

    func submit<Machine>(_ runner: FormRunner<Machine>) {
        runner.submit { [session] in session.answered($0) }
    }

    func advance(ms: Int64) { scheduler.advance(by: .milliseconds(ms)) }

    /// Answers everything the storage and the password work hold, until nothing is left.
    func releaseEverything() {
        while storage.releaseNext() || passwords.releaseNext() {}
    }

    /// An account stored as if registered earlier (its password "hashed" the fake way).
    func existingAccount(_ username: String, password: String, email: String? = nil) {
        let answering = storage.answering
        storage.answering = .immediately
        defer { storage.answering = answering }
        storage.acting(for: .daemon).createAccount(NewAccount(username: username, display: username, email: email,
                                                              passwordHash: FakePasswordWork.hash(of: password))) { _ in }
    }
}

/// Shorthands for expected happenings.
func field(_ form: FormName, _ field: FieldName, _ state: FieldState, _ code: FieldCode, enabled: Bool = true,
           rev: Int) -> Happening {
    .event(.field(form: form, field: field, state: state, code: code, enabled: enabled, rev: rev))
}

func submittable(_ form: FormName, _ value: Bool) -> Happening { .event(.form(form: form, submittable: value)) }

func submit(_ form: FormName, _ state: SubmitState, _ code: SubmitCode) -> Happening {
    .event(.submit(form: form, state: state, code: code))
}
