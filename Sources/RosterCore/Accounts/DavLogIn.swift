// DavLogIn — one `auth.dav_login` attempt (a CardDAV client's HTTP Basic credentials, relayed), sans I/O.
//
// RULES
//   The identifier and the rate limit are `LogIn`'s, with the same keys in the same gate: a DAV failure counts
//   toward an `auth.login`'s limit and the other way round (per account, and per requester: the peer uid, or the
//   `remote` a trusted gateway speaks for). A limited attempt is answered `rate_limited`, nothing checked.
//   The typed secret is first compared with the account's app passwords (a keyed hash, in constant time: cheap,
//   so a DAV client may log in on every sync); one that matches logs in with `method: app_password`. Otherwise it
//   is verified as the account's own password on the hashing lane (against a dummy of the same cost for an unknown
//   identifier). An account's own password logs in only when the account has no TOTP: a DAV client cannot type a
//   code, so for an account with TOTP even its right password is refused (`invalid_credentials`, counted as a
//   failure, audited as `app_password_required`). A refusal is recorded for both keys before it is answered, as
//   `LogIn` records it, and answered as `LogIn` answers (`invalid_credentials`, or `wrong_password`/`not_found` when
//   the policy reveals unknown users). A locked account is answered `locked` once its secret is accepted. The token
//   issued is a contacts-only one (the runtime's); its session may call only the contacts methods.
//   A hash made with older parameters is not upgraded here: `auth.login` does that, and a DAV client would only
//   pay for it on its next sync.
//
// THEORY OF OPERATION
//   findAccount → accountFound · readFailures → failuresRead · checkAppPassword → appPasswordChecked
//   (→ issueToken when it matched) · verify → verified · recordFailure → failureRecorded · issueToken →
//   tokenIssued · finish. `failed` answers any effect that could not be carried out. The attempt holds its place
//   in the gate from the moment its keys are known until its verdict is known and recorded, on every path.

/// What an `auth.dav_login` submits.
public struct DavLogInRequest: Equatable, Sendable {
    /// A canonical username, or a canonical email.
    public let identifier: String
    /// The typed secret: an app password, or the account's own password (normalized as at registration).
    public let password: Secret

    public init(typedIdentifier identifier: String, password: Secret, policy: Policy) {
        self.identifier = Normalization.canonicalLoginIdentifier(identifier)
        self.password = Normalization.normalizedPassword(password, nfkc: policy.passwordNFKC)
    }
}

/// How a DAV log-in was proved.
public enum DavProof: Equatable, Sendable {
    /// One of the account's app passwords, by id.
    case appPassword(id: String)
    /// The account's own password (an account without TOTP).
    case password
}

/// Why a DAV log-in was refused, for its audit entry.
public enum DavRefusal: Equatable, Sendable {
    case unknownUser
    case wrongPassword
    /// The account's right password, on an account with TOTP.
    case appPasswordRequired
}

/// One DAV log-in attempt, from the typed credentials to a contacts-only token: facts in, effects out.
public struct DavLogIn<Account: Sendable>: Sendable {
    /// The account an identifier names.
    public struct Found: Sendable {
        public let account: Account
        /// Its canonical username: the account's rate-limit key.
        public let username: String
        public let passwordHash: String
        /// Whether the account has a confirmed TOTP secret.
        public let hasTOTP: Bool
        public let locked: Bool

        public init(account: Account, username: String, passwordHash: String, hasTOTP: Bool, locked: Bool) {
            self.account = account
            self.username = username
            self.passwordHash = passwordHash
            self.hasTOTP = hasTOTP
            self.locked = locked
        }
    }

    /// An accepted attempt: the account, how it was proved, and its token or why there is none.
    public struct SignedIn: Sendable {
        public let account: Account
        public let proof: DavProof
        public let token: Result<IssuedToken, RosterError>
    }

    public enum Fact: Sendable {
        case accountFound(Found?)
        case failuresRead(times: [String: [Int64]], nowMs: Int64)
        /// The id of the app password the secret matched; nil for none.
        case appPasswordChecked(id: String?)
        /// Whether the hashing lane accepted the secret as the account's password.
        case verified(Bool)
        case failureRecorded
        case tokenIssued(IssuedToken)
        case failed(RosterError)
    }

    public enum Effect: Sendable {
        /// Answer with `accountFound`.
        case findAccount(identifier: String)
        /// Answer with `failuresRead`.
        case readFailures(keys: [String], windowMs: Int64)
        /// Hash the secret and compare it with each of the account's app passwords in constant time; answer with
        /// `appPasswordChecked`.
        case checkAppPassword(password: Secret, account: Account)
        /// On the hashing lane, against `against`, or a dummy of the same cost when nil; answer with `verified`.
        case verify(password: Secret, against: String?)
        /// Durably, for every key, with the refusal's entry; answer with `failureRecorded`.
        case recordFailure(keys: [String], refusal: DavRefusal, username: String?)
        /// Make and store a contacts-only session token; answer with `tokenIssued`.
        case issueToken(for: Account, proof: DavProof)
        case finish(Result<SignedIn, RosterError>)
    }

    private enum Stage {
        case finding
        case gating(Found?, LoginGate.Attempt)
        case checking(Found, LoginGate.Attempt)
        case verifying(Found?, LoginGate.Attempt)
        case recording(LoginGate.Attempt, refusal: RosterError)
        case issuing(Account, DavProof)
        case done
    }

    private let request: DavLogInRequest
    private let requester: Requester
    private let policy: Policy
    private var stage = Stage.finding

    public init(_ request: DavLogInRequest, requester: Requester, policy: Policy) {
        self.request = request
        self.requester = requester
        self.policy = policy
    }

    /// The first effect.
    public func start() -> [Effect] {
        [.findAccount(identifier: request.identifier)]
    }

    public mutating func step(_ fact: Fact, gate: inout LoginGate) -> [Effect] {
        switch (stage, fact) {
        case (.finding, .accountFound(let found)):
            let attempt = gate.begin(LoginGate.Keys(found: found?.username, identifier: request.identifier,
                                                    requester: requester, separatingUnknown: policy.revealUnknownUsers))
            stage = .gating(found, attempt)
            return [.readFailures(keys: attempt.keys.read, windowMs: LoginGate.windowMs(policy))]
        case (.gating(let found, let attempt), .failuresRead(let times, let nowMs)):
            if case .limited(let wait) = gate.decide(attempt, failures: times, nowMs: nowMs, policy: policy) {
                gate.end(attempt)
                return finish(.failure(.rateLimited(retryAfterMs: wait)))
            }
            guard let found else {
                stage = .verifying(nil, attempt)
                return [.verify(password: request.password, against: nil)]
            }
            stage = .checking(found, attempt)
            return [.checkAppPassword(password: request.password, account: found.account)]
        case (.checking(let found, let attempt), .appPasswordChecked(let id?)):
            return accepted(found, attempt, proof: .appPassword(id: id), gate: &gate)
        case (.checking(let found, let attempt), .appPasswordChecked(nil)):
            stage = .verifying(found, attempt)
            return [.verify(password: request.password, against: found.passwordHash)]
        case (.verifying(let found?, let attempt), .verified(true)):
            guard !found.hasTOTP else {
                return record(attempt, refusal: .invalidCredentials, why: .appPasswordRequired, username: found.username)
            }
            return accepted(found, attempt, proof: .password, gate: &gate)
        case (.verifying(let found, let attempt), .verified):
            // A dummy hash accepts nothing; an unknown identifier is refused whatever the hashing lane said.
            let refusal: RosterError = policy.revealUnknownUsers ? (found != nil ? .wrongPassword : .notFound)
                : .invalidCredentials
            return record(attempt, refusal: refusal, why: found == nil ? .unknownUser : .wrongPassword,
                          username: found?.username)
        case (.recording(let attempt, let refusal), .failureRecorded):
            gate.end(attempt)
            return finish(.failure(refusal))
        case (.issuing(let account, let proof), .tokenIssued(let token)):
            return finish(.success(SignedIn(account: account, proof: proof, token: .success(token))))
        case (.issuing(let account, let proof), .failed(let error)):
            return finish(.success(SignedIn(account: account, proof: proof, token: .failure(error))))
        case (.finding, .failed(let error)):
            return finish(.failure(error))
        case (.gating(_, let attempt), .failed(let error)), (.checking(_, let attempt), .failed(let error)),
             (.verifying(_, let attempt), .failed(let error)), (.recording(let attempt, _), .failed(let error)):
            gate.end(attempt)
            return finish(.failure(error))
        case (.finding, _), (.gating, _), (.checking, _), (.verifying, _), (.recording, _), (.issuing, _), (.done, _):
            // An answer to an effect this attempt did not ask for changes nothing.
            return []
        }
    }

    /// The secret is right: `locked`, or the token.
    private mutating func accepted(_ found: Found, _ attempt: LoginGate.Attempt, proof: DavProof,
                                   gate: inout LoginGate) -> [Effect] {
        gate.end(attempt)
        // Only now, after the right secret: before, `locked` would tell anyone the account exists.
        if found.locked { return finish(.failure(.locked)) }
        stage = .issuing(found.account, proof)
        return [.issueToken(for: found.account, proof: proof)]
    }

    private mutating func record(_ attempt: LoginGate.Attempt, refusal: RosterError, why: DavRefusal,
                                 username: String?) -> [Effect] {
        stage = .recording(attempt, refusal: refusal)
        return [.recordFailure(keys: attempt.keys.all, refusal: why, username: username)]
    }

    private mutating func finish(_ result: Result<SignedIn, RosterError>) -> [Effect] {
        stage = .done
        return [.finish(result)]
    }
}

extension DavLogIn.Found: Equatable where Account: Equatable {}
extension DavLogIn.SignedIn: Equatable where Account: Equatable {}
extension DavLogIn.Fact: Equatable where Account: Equatable {}
extension DavLogIn.Effect: Equatable where Account: Equatable {}

/// What a session may call: everything its account may, or (a DAV log-in's token) only the contacts.
public enum SessionScope: String, Equatable, Sendable {
    case full
    /// `auth.dav_login`'s: the contacts methods and what a connection needs around them.
    case contacts

    /// The methods a contacts-only session may call besides `contacts.*`.
    public static let contactsExtras: Set<String> = ["session.hello", "session.resume", "session.logout", "rpc.describe"]

    /// Whether a session of this scope may call `method`; anything else is `forbidden`.
    public func allows(_ method: String) -> Bool {
        switch self {
        case .full: true
        case .contacts: method.hasPrefix("contacts.") || Self.contactsExtras.contains(method)
        }
    }
}
