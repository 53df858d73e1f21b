// Registration — one new account, by the register form's submit or by `users.register`, sans I/O.
//
// RULES
//   `users.register` is judged by the register rules (`RegisterRules`, the form's own), in this order, and the
//   first field that fails is the answer: username (its local rules, then its availability check), password
//   (local rules), email (local rules, then its availability check), then the password's quality check when
//   the policy asks for one. A `taken` verdict answers `taken` for that field; any other answers
//   `invalid_field` with the field's code. There is no confirm field: a script types the password once.
//   The register form has judged its fields already; its submit starts at the hash.
//   Then: hash the normalized password (the hashing lane), create the account (a clash is the storage's
//   `taken`, also when another writer won a race), announce it (every open register form re-checks), and, for
//   the form only, issue a session token. A token that cannot be stored does not undo the account.
//
// THEORY OF OPERATION
//   A chain of steps. Each step's effects are performed by the runtime in order, and the one that needs an
//   answer is answered with the fact named beside it:
//     check → checked · hash → hashed · create → created · announce · issueToken → tokenIssued · finish.
//   `failed` answers any effect that could not be carried out; it ends the registration with that error (a
//   check that failed reads as the check's `check_failed` verdict, as in the form, except one the database could
//   not be reached for, which answers `storage_unavailable` as the write would). After `finish` every fact is
//   ignored.

/// One registration, from its params (or the register form's submit) to the stored account: facts in, effects out.
public struct Registration<Account: Sendable>: Sendable {
    /// The new account, and its session token when one was asked for (the register form logs the session in).
    public struct Registered: Sendable {
        public let account: Account
        public let token: Result<IssuedToken, RosterError>?
    }

    public enum Fact: Sendable {
        case checked(CheckResult)
        case hashed(passwordHash: String)
        case created(Account)
        case tokenIssued(IssuedToken)
        /// The effect asked for could not be carried out.
        case failed(RosterError)
    }

    public enum Effect: Sendable {
        /// Answer with `checked`.
        case check(Check)
        /// Argon2id off the loop; answer with `hashed`.
        case hash(password: Secret)
        /// Store it durably; answer with `created`.
        case create(username: String, email: String?, passwordHash: String)
        /// It exists now: log it, and let every other open register form mark the name and email taken.
        case announce(Account)
        /// Make and store a session token; answer with `tokenIssued`.
        case issueToken(for: Account)
        case finish(Result<Registered, RosterError>)
    }

    private enum Field {
        case username
        case password
        case email

        var name: String {
            switch self {
            case .username: "username"
            case .password: "password"
            case .email: "email"
            }
        }
    }

    /// One part of judging `users.register`'s params, in the order they are taken.
    private enum Judgement {
        /// The local rules refused the field: that is the answer.
        case refuse(Field, FieldVerdict)
        /// The check decides the field.
        case check(Field, Check)
    }

    private enum Stage {
        /// Judging: the judgement whose check is out, and those after it.
        case judging(Field, Check, remaining: ArraySlice<Judgement>)
        case hashing
        case creating
        case issuing(Account)
        case done
    }

    private let request: RegistrationRequest
    private let issuesToken: Bool
    private let judgements: [Judgement]
    private var stage = Stage.hashing

    /// `users.register`: the params as typed, judged by the register rules before anything is stored.
    public static func judging(username: String, password: Secret, email: String, policy: Policy) -> Registration {
        Registration(request: RegistrationRequest(typedUsername: username, password: password, email: email, policy: policy),
                     issuesToken: false,
                     judgements: judgements(username: username, password: password, email: email, policy: policy))
    }

    /// The register form's submit: its fields were judged already; `issuesToken` logs the session in.
    public init(judged request: RegistrationRequest, issuesToken: Bool) {
        self.init(request: request, issuesToken: issuesToken, judgements: [])
    }

    private init(request: RegistrationRequest, issuesToken: Bool, judgements: [Judgement]) {
        self.request = request
        self.issuesToken = issuesToken
        self.judgements = judgements
    }

    /// The first effects.
    public mutating func start() -> [Effect] {
        judge(judgements[...])
    }

    public mutating func step(_ fact: Fact) -> [Effect] {
        switch (stage, fact) {
        case (.judging(let field, let check, let remaining), .checked(let result)):
            return judged(field, check.verdict(for: result), remaining: remaining)
        case (.judging, .failed(.storageUnavailable(let retryAfterMs))):
            return finish(.failure(.storageUnavailable(retryAfterMs: retryAfterMs)))
        case (.judging(let field, let check, let remaining), .failed):
            return judged(field, check.verdict(for: .failed), remaining: remaining)
        case (.hashing, .hashed(let hash)):
            stage = .creating
            return [.create(username: request.username, email: request.email, passwordHash: hash)]
        case (.creating, .created(let account)):
            guard issuesToken else {
                return [.announce(account)] + finish(.success(Registered(account: account, token: nil)))
            }
            stage = .issuing(account)
            return [.announce(account), .issueToken(for: account)]
        case (.issuing(let account), .tokenIssued(let token)):
            return finish(.success(Registered(account: account, token: .success(token))))
        case (.issuing(let account), .failed(let error)):
            // The account is real either way; the caller decides what a session without a token means.
            return finish(.success(Registered(account: account, token: .failure(error))))
        case (.hashing, .failed(let error)), (.creating, .failed(let error)):
            return finish(.failure(error))
        case (.judging, _), (.hashing, _), (.creating, _), (.issuing, _), (.done, _):
            // An answer to an effect this registration did not ask for changes nothing.
            return []
        }
    }

    private mutating func finish(_ result: Result<Registered, RosterError>) -> [Effect] {
        stage = .done
        return [.finish(result)]
    }

    // MARK: Judging

    /// The username first (its check too: a taken name is the answer even when the password is too short),
    /// then the password's local rules, the email, and last the password's quality, which costs the most.
    private static func judgements(username: String, password: Secret, email: String, policy: Policy) -> [Judgement] {
        var judgements: [Judgement] = []
        var quality: Check?
        for field in [Field.username, .password, .email] {
            let evaluation = switch field {
            case .username: RegisterRules.username(username, policy: policy)
            case .password: RegisterRules.password(password, username: username, policy: policy)
            case .email: RegisterRules.email(email)
            }
            switch evaluation {
            case .settled(let verdict) where !accepts(field, verdict):
                judgements.append(.refuse(field, verdict))
                return judgements
            case .settled:
                break
            case .check(let check) where field == .password:
                quality = check
            case .check(let check):
                judgements.append(.check(field, check))
            }
        }
        if let quality { judgements.append(.check(.password, quality)) }
        return judgements
    }

    /// The email is optional, so empty is fine there; every other field must be valid.
    private static func accepts(_ field: Field, _ verdict: FieldVerdict) -> Bool {
        switch field {
        case .username, .password: verdict.state == .valid
        case .email: verdict.state == .valid || verdict.state == .empty
        }
    }

    private mutating func judge(_ remaining: ArraySlice<Judgement>) -> [Effect] {
        guard let first = remaining.first else {
            stage = .hashing
            return [.hash(password: request.password)]
        }
        switch first {
        case .refuse(let field, let verdict):
            return finish(.failure(Self.error(field, verdict)))
        case .check(let field, let check):
            stage = .judging(field, check, remaining: remaining.dropFirst())
            return [.check(check)]
        }
    }

    private mutating func judged(_ field: Field, _ verdict: FieldVerdict, remaining: ArraySlice<Judgement>) -> [Effect] {
        guard Self.accepts(field, verdict) else { return finish(.failure(Self.error(field, verdict))) }
        return judge(remaining)
    }

    /// What `users.register` answers for a refused field.
    private static func error(_ field: Field, _ verdict: FieldVerdict) -> RosterError {
        verdict.code == .taken ? .taken(field: field.name) : .invalidField(field: field.name, code: verdict.code.rawValue)
    }
}

extension Registration.Registered: Equatable where Account: Equatable {}
extension Registration.Fact: Equatable where Account: Equatable {}
extension Registration.Effect: Equatable where Account: Equatable {}
