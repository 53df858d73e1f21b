// LogIn — one log-in attempt, by the log-in form's submit or by `auth.login`, sans I/O.
//
// RULES
//   The identifier is a canonical username, or an email when it holds an `@` (as the log-in field takes either).
//   The rate limit (protocol.md "Failed log-ins", `LoginGate`) is asked before any password is verified: per account and per requester
//   (the peer uid, or the remote a trusted gateway speaks for; failures on unknown names apart where the answers
//   tell them, see LoginRateLimit.swift), failures counted durably, attempts still being verified counted as
//   failures. A limited attempt is
//   answered `rate_limited` with the wait, and nothing is verified or recorded.
//   The password is verified on the hashing lane, against the stored hash or, for an unknown identifier, against
//   a dummy of the same cost (no timing tells whether the account exists). A refusal is recorded for both keys
//   before it is answered, so the count survives a restart: `wrong_password` or `not_found` when the policy
//   reveals unknown users, else `invalid_credentials` for both. An accepted password whose hash was made with
//   other parameters is re-hashed there, and the new hash stored before the answer.
//   Two-step log-in (protocol.md "Log-in with TOTP, step by step"): only after an accepted password, an account with a confirmed TOTP secret needs
//   a code. Without one (an empty code counts as none) the answer is `code_required`, and nothing is recorded:
//   the password was right, and the form asks again with the code. With one, the runtime opens the seal and
//   checks the code (within ±1 step, never a step at or before the last one accepted); a wrong or replayed code
//   is recorded for both keys like a wrong password, then answered `invalid_code`. The attempt stays in the gate
//   until the code's verdict, so guesses in flight count as failures too. A code sent for an account without
//   TOTP is ignored. A locked account (protocol.md "Administering users") is answered `locked` once its password is accepted and
//   before any code is asked for: a wrong password reads and counts as it always has, so the answer tells a
//   guesser nothing the password did not already prove, and the lock needs no code to be seen. Then a session token is issued; a token that cannot be stored still leaves the attempt
//   accepted (the caller decides).
//
// THEORY OF OPERATION
//   A chain of steps. Each effect is performed by the runtime and answered with the fact named beside it:
//     findAccount → accountFound · readFailures → failuresRead · verify → verified ·
//     recordFailure → failureRecorded, or replaceHash → hashReplaced · verifyCode → codeVerified
//     (→ recordFailure when false) · issueToken → tokenIssued · finish.
//   `failed` answers any effect that could not be carried out and ends the attempt with that error (after a
//   verified password it only means there is no token). The gate is shared by every attempt, so each step is
//   given it: the attempt begins there once its keys are known, before its failures are read, and ends once
//   its verdict is known and recorded — on every path, so a count never leaks. After `finish` facts are ignored.

/// What a log-in submits, as the log-in form and `auth.login` both normalize what was typed.
public struct LogInRequest: Equatable, Sendable {
    /// A canonical username, or a canonical email.
    public let identifier: String
    /// The normalized password, as it was at registration.
    public let password: Secret
    /// The TOTP code, when the client sends one (after a `code_required`); nil or empty for none.
    public let code: String?

    public init(typedIdentifier identifier: String, password: Secret, policy: Policy, code: String? = nil) {
        self.identifier = Normalization.canonicalLoginIdentifier(identifier)
        self.password = Normalization.normalizedPassword(password, nfkc: policy.passwordNFKC)
        self.code = code
    }

    /// Values already in canonical form (the log-in form's `.login` action).
    public init(identifier: String, password: Secret, code: String? = nil) {
        self.identifier = identifier
        self.password = password
        self.code = code
    }
}

/// One log-in attempt, from the typed credentials to a session token: facts in, effects out.
public struct LogIn<Account: Sendable>: Sendable {
    /// The account an identifier names, with the hash to verify against.
    public struct Found: Sendable {
        public let account: Account
        /// Its canonical username: the account's rate-limit key, whichever identifier was typed.
        public let username: String
        public let passwordHash: String
        /// The confirmed TOTP secret, sealed; nil when the account logs in with its password alone.
        public let totp: TOTPSeal?
        /// An administrator locked the account (`admin.users.lock`).
        public let locked: Bool

        public init(account: Account, username: String, passwordHash: String, totp: TOTPSeal? = nil, locked: Bool = false) {
            self.account = account
            self.username = username
            self.passwordHash = passwordHash
            self.totp = totp
            self.locked = locked
        }
    }

    /// What the hashing lane found.
    public enum Verification: Equatable, Sendable {
        /// The password matches; `upgradedHash` is a new hash when the stored one used other parameters.
        case accepted(upgradedHash: String?)
        case refused
    }

    /// An accepted attempt: the account, and its new token or why there is none.
    public struct SignedIn: Sendable {
        public let account: Account
        public let token: Result<IssuedToken, RosterError>
    }

    public enum Fact: Sendable {
        case accountFound(Found?)
        /// The failure times per key, and the storage's clock they are measured against.
        case failuresRead(times: [String: [Int64]], nowMs: Int64)
        case verified(Verification)
        case failureRecorded
        case hashReplaced
        /// True when the code matched a step after the last one accepted, and that step is now the last.
        case codeVerified(Bool)
        case tokenIssued(IssuedToken)
        /// The effect asked for could not be carried out.
        case failed(RosterError)
    }

    public enum Effect: Sendable {
        /// Answer with `accountFound`.
        case findAccount(identifier: String)
        /// Answer with `failuresRead`.
        case readFailures(keys: [String], windowMs: Int64)
        /// On the hashing lane, against `passwordHash`, or a dummy of the same cost when it is nil; answer with
        /// `verified`.
        case verify(password: Secret, against: String?)
        /// Durably, for every key; answer with `failureRecorded`.
        case recordFailure(keys: [String])
        /// Answer with `hashReplaced`.
        case replaceHash(String, of: Account)
        /// Open `totp`, check `code` within ±1 step at the runtime's wall clock, and make the matched step the last
        /// accepted one (atomically, so a code works once); answer with `codeVerified`.
        case verifyCode(code: String, totp: TOTPSeal, account: Account)
        /// Make and store a session token; answer with `tokenIssued`.
        case issueToken(for: Account)
        case finish(Result<SignedIn, RosterError>)
    }

    private enum Stage {
        case finding
        case gating(Found?, LoginGate.Attempt)
        case verifying(Found?, LoginGate.Attempt)
        case recording(LoginGate.Attempt, refusal: RosterError)
        case upgrading(Found, LoginGate.Attempt)
        case checkingCode(Found, LoginGate.Attempt)
        case issuing(Account)
        case done
    }

    private let request: LogInRequest
    private let requester: Requester
    private let policy: Policy
    private var stage = Stage.finding

    public init(_ request: LogInRequest, requester: Requester, policy: Policy) {
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
            stage = .verifying(found, attempt)
            return [.verify(password: request.password, against: found?.passwordHash)]
        case (.verifying(let found?, let attempt), .verified(.accepted(let upgraded?))):
            stage = .upgrading(found, attempt)
            return [.replaceHash(upgraded, of: found.account)]
        case (.verifying(let found?, let attempt), .verified(.accepted(nil))):
            return passwordAccepted(found, attempt, gate: &gate)
        case (.verifying(let found, let attempt), .verified):
            // A dummy hash accepts nothing; an unknown identifier is refused whatever the hashing lane said.
            let refusal: RosterError = policy.revealUnknownUsers ? (found != nil ? .wrongPassword : .notFound)
                : .invalidCredentials
            return record(attempt, refusal: refusal)
        case (.recording(let attempt, let refusal), .failureRecorded):
            gate.end(attempt)
            return finish(.failure(refusal))
        case (.upgrading(let found, let attempt), .hashReplaced):
            return passwordAccepted(found, attempt, gate: &gate)
        case (.checkingCode(let found, let attempt), .codeVerified(true)):
            gate.end(attempt)
            return issue(found.account)
        case (.checkingCode(_, let attempt), .codeVerified(false)):
            return record(attempt, refusal: .invalidCode)
        case (.issuing(let account), .tokenIssued(let token)):
            return finish(.success(SignedIn(account: account, token: .success(token))))
        case (.issuing(let account), .failed(let error)):
            return finish(.success(SignedIn(account: account, token: .failure(error))))
        case (.finding, .failed(let error)):
            return finish(.failure(error))
        case (.gating(_, let attempt), .failed(let error)), (.verifying(_, let attempt), .failed(let error)),
             (.recording(let attempt, _), .failed(let error)), (.upgrading(_, let attempt), .failed(let error)),
             (.checkingCode(_, let attempt), .failed(let error)):
            gate.end(attempt)
            return finish(.failure(error))
        case (.finding, _), (.gating, _), (.verifying, _), (.recording, _), (.upgrading, _), (.checkingCode, _),
             (.issuing, _), (.done, _):
            // An answer to an effect this attempt did not ask for changes nothing.
            return []
        }
    }

    /// The password is right (and its hash current): the token, or first the second step.
    private mutating func passwordAccepted(_ found: Found, _ attempt: LoginGate.Attempt, gate: inout LoginGate) -> [Effect] {
        if found.locked {
            // Only now, after the right password: before, `locked` would tell anyone the account exists.
            gate.end(attempt)
            return finish(.failure(.locked))
        }
        guard let totp = found.totp else {
            gate.end(attempt)
            return issue(found.account)
        }
        guard let code = request.code, !code.isEmpty else {
            // Not a failure: the client learns a code is needed only after proving the password.
            gate.end(attempt)
            return finish(.failure(.codeRequired))
        }
        stage = .checkingCode(found, attempt)
        return [.verifyCode(code: code, totp: totp, account: found.account)]
    }

    private mutating func record(_ attempt: LoginGate.Attempt, refusal: RosterError) -> [Effect] {
        stage = .recording(attempt, refusal: refusal)
        return [.recordFailure(keys: attempt.keys.all)]
    }

    private mutating func issue(_ account: Account) -> [Effect] {
        stage = .issuing(account)
        return [.issueToken(for: account)]
    }

    private mutating func finish(_ result: Result<SignedIn, RosterError>) -> [Effect] {
        stage = .done
        return [.finish(result)]
    }
}

extension LogIn.Found: Equatable where Account: Equatable {}
extension LogIn.SignedIn: Equatable where Account: Equatable {}
extension LogIn.Fact: Equatable where Account: Equatable {}
extension LogIn.Effect: Equatable where Account: Equatable {}
