// PasskeyLogIn — one log-in by passkey (`auth.passkey_finish`), sans I/O and sans cryptography.
//
// RULES
//   The credential id names the passkey; the account is its owner, whoever was asked for. When `auth.passkey_begin`
//   named a user, the credential must be one of that user's (WebAuthn §7.2 step 5); an assertion that carries a
//   user handle must carry its owner's (step 6). Otherwise the passkey counts as unknown: `invalid_credentials`.
//   The rate limit (`LoginGate`) is asked before any signature is checked, with the owner's username as the
//   account key (an unknown credential counts against the requester only, under a key of its own), exactly as a
//   password log-in; every refusal after it is recorded for both keys before it is answered.
//   The runtime verifies the assertion (challenge, origin, RP ID, flags, signature): a refusal answers
//   `passkey_rejected` with its `why`. Then the sign count: one that did not move forward is refused as
//   `why: "counter"` and changes nothing (the storage's conditional write is the atomic check).
//   A locked account answers `locked` only after the assertion proved the passkey, as a password log-in does.
//   A user-verified assertion is two factors: no TOTP code. A user-present-only one on an account with TOTP
//   needs the code: without one the answer is `code_required` (nothing recorded, the caller keeps the verified
//   assertion for the next finish), with one it is checked as a password log-in's code is.
//   A finish that continues a verified assertion with its code (`proof: .verifiedEarlier`) checks no assertion
//   again: it finds the passkey (it may have been removed meanwhile), gates, and checks the code.
//
// THEORY OF OPERATION
//   findPasskey → passkeyFound · readFailures → failuresRead · verifyAssertion → assertionVerified ·
//   useSignCount → signCountUsed · verifyCode → codeVerified · recordFailure → failureRecorded ·
//   issueToken → tokenIssued · finish. `failed` answers any effect that could not be carried out. The gate sees
//   the attempt from its keys until its verdict is recorded, on every path.

/// What an `auth.passkey_finish` submits, once its JSON is read.
public struct PasskeyLogInRequest: Equatable, Sendable {
    /// How the passkey was proved.
    public enum Proof: Equatable, Sendable {
        /// An assertion to verify now, with the user handle it carried.
        case assertion(userHandle: [UInt8]?)
        /// An assertion this connection verified before, user-present only, now continued with its code.
        case verifiedEarlier
    }

    public let credentialID: [UInt8]
    public let proof: Proof
    /// The credential ids `auth.passkey_begin` allowed when it named a user; nil when it named none.
    public let allowed: [[UInt8]]?
    /// The TOTP code, after a `code_required`; nil or empty for none.
    public let code: String?

    public init(credentialID: [UInt8], proof: Proof, allowed: [[UInt8]]?, code: String?) {
        self.credentialID = credentialID
        self.proof = proof
        self.allowed = allowed
        self.code = code
    }
}

/// One passkey log-in attempt, from the credential to a session token: facts in, effects out.
public struct PasskeyLogIn<Account: Sendable, Key: Sendable>: Sendable {
    /// The passkey a credential id names, with its owner as a log-in needs it.
    public struct Found: Sendable {
        public let account: Account
        public let username: String
        public let key: Key
        /// Whether the assertion's user handle, when it carried one, is the owner's.
        public let handleMatches: Bool
        public let totp: TOTPSeal?
        public let locked: Bool

        public init(account: Account, username: String, key: Key, handleMatches: Bool, totp: TOTPSeal?, locked: Bool) {
            self.account = account
            self.username = username
            self.key = key
            self.handleMatches = handleMatches
            self.totp = totp
            self.locked = locked
        }
    }

    /// What the runtime's verifier found: the sign count and user verification, or the `why` of a refusal.
    public enum Verification: Equatable, Sendable {
        case accepted(signCount: UInt32, userVerified: Bool)
        case rejected(why: String)
    }

    /// An accepted attempt: the account and its token (or why there is none).
    public struct SignedIn: Sendable {
        public let account: Account
        public let token: Result<IssuedToken, RosterError>
    }

    public enum Fact: Sendable {
        case passkeyFound(Found?)
        case failuresRead(times: [String: [Int64]], nowMs: Int64)
        case assertionVerified(Verification)
        /// True when the sign count moved forward and was stored.
        case signCountUsed(Bool)
        case codeVerified(Bool)
        case failureRecorded
        case tokenIssued(IssuedToken)
        case failed(RosterError)
    }

    public enum Effect: Sendable {
        /// Answer with `passkeyFound` (nil for no such passkey).
        case findPasskey(credentialID: [UInt8], userHandle: [UInt8]?)
        case readFailures(keys: [String], windowMs: Int64)
        /// Verify the assertion against `key`; answer with `assertionVerified`.
        case verifyAssertion(key: Key)
        /// Store `signCount` if it moves forward; answer with `signCountUsed`.
        case useSignCount(credentialID: [UInt8], signCount: UInt32)
        case verifyCode(code: String, totp: TOTPSeal, account: Account)
        /// Durably for every key, with the refusal's entry; answer with `failureRecorded`.
        case recordFailure(keys: [String], refusal: RosterError, username: String?)
        case issueToken(for: Account)
        /// The attempt's end. `.failure(.codeRequired)` means the caller keeps the verified assertion for its code.
        case finish(Result<SignedIn, RosterError>)
    }

    private enum Stage {
        case finding
        case gating(Found?, LoginGate.Attempt)
        case verifying(Found, LoginGate.Attempt)
        case counting(Found, LoginGate.Attempt, userVerified: Bool)
        case checkingCode(Found, LoginGate.Attempt)
        case recording(LoginGate.Attempt, refusal: RosterError)
        case issuing(Account)
        case done
    }

    /// The account key under which an unknown credential's failures count: never a username (no `:` in one).
    public static var unknownCredentialIdentifier: String { "passkey:unknown" }

    private let request: PasskeyLogInRequest
    private let requester: Requester
    private let policy: Policy
    private var stage = Stage.finding

    public init(_ request: PasskeyLogInRequest, requester: Requester, policy: Policy) {
        self.request = request
        self.requester = requester
        self.policy = policy
    }

    public func start() -> [Effect] {
        let handle: [UInt8]? = if case .assertion(let handle) = request.proof { handle } else { nil }
        return [.findPasskey(credentialID: request.credentialID, userHandle: handle)]
    }

    public mutating func step(_ fact: Fact, gate: inout LoginGate) -> [Effect] {
        switch (stage, fact) {
        case (.finding, .passkeyFound(let found)):
            let usable = found.flatMap { found -> Found? in
                guard found.handleMatches else { return nil }
                if let allowed = request.allowed, !allowed.contains(request.credentialID) { return nil }
                return found
            }
            let attempt = gate.begin(LoginGate.Keys(found: usable?.username, identifier: Self.unknownCredentialIdentifier,
                                                    requester: requester, separatingUnknown: false))
            stage = .gating(usable, attempt)
            return [.readFailures(keys: attempt.keys.read, windowMs: LoginGate.windowMs(policy))]
        case (.gating(let found, let attempt), .failuresRead(let times, let nowMs)):
            if case .limited(let wait) = gate.decide(attempt, failures: times, nowMs: nowMs, policy: policy) {
                gate.end(attempt)
                return finish(.failure(.rateLimited(retryAfterMs: wait)))
            }
            guard let found else { return record(attempt, refusal: .invalidCredentials, username: nil) }
            if request.proof == .verifiedEarlier { return proved(found, attempt, userVerified: false, gate: &gate) }
            stage = .verifying(found, attempt)
            return [.verifyAssertion(key: found.key)]
        case (.verifying(let found, let attempt), .assertionVerified(.rejected(let why))):
            return record(attempt, refusal: .passkeyRejected(why: why), username: found.username)
        case (.verifying(let found, let attempt), .assertionVerified(.accepted(let count, let verified))):
            stage = .counting(found, attempt, userVerified: verified)
            return [.useSignCount(credentialID: request.credentialID, signCount: count)]
        case (.counting(let found, let attempt, _), .signCountUsed(false)):
            return record(attempt, refusal: .passkeyRejected(why: "counter"), username: found.username)
        case (.counting(let found, let attempt, let verified), .signCountUsed(true)):
            return proved(found, attempt, userVerified: verified, gate: &gate)
        case (.checkingCode(let found, let attempt), .codeVerified(true)):
            gate.end(attempt)
            return issue(found.account)
        case (.checkingCode(let found, let attempt), .codeVerified(false)):
            return record(attempt, refusal: .invalidCode, username: found.username)
        case (.recording(let attempt, let refusal), .failureRecorded):
            gate.end(attempt)
            return finish(.failure(refusal))
        case (.issuing(let account), .tokenIssued(let token)):
            return finish(.success(SignedIn(account: account, token: .success(token))))
        case (.issuing(let account), .failed(let error)):
            return finish(.success(SignedIn(account: account, token: .failure(error))))
        case (.finding, .failed(let error)):
            return finish(.failure(error))
        case (.gating(_, let attempt), .failed(let error)), (.verifying(_, let attempt), .failed(let error)),
             (.counting(_, let attempt, _), .failed(let error)), (.checkingCode(_, let attempt), .failed(let error)),
             (.recording(let attempt, _), .failed(let error)):
            gate.end(attempt)
            return finish(.failure(error))
        case (.finding, _), (.gating, _), (.verifying, _), (.counting, _), (.checkingCode, _), (.recording, _),
             (.issuing, _), (.done, _):
            return []
        }
    }

    /// The passkey is proved: the lock, then the second factor when one is still owed, then the token.
    private mutating func proved(_ found: Found, _ attempt: LoginGate.Attempt, userVerified: Bool,
                                 gate: inout LoginGate) -> [Effect] {
        if found.locked {
            gate.end(attempt)
            return finish(.failure(.locked))
        }
        guard let totp = found.totp, !userVerified else {
            gate.end(attempt)
            return issue(found.account)
        }
        guard let code = request.code, !code.isEmpty else {
            gate.end(attempt)
            return finish(.failure(.codeRequired))
        }
        stage = .checkingCode(found, attempt)
        return [.verifyCode(code: code, totp: totp, account: found.account)]
    }

    private mutating func record(_ attempt: LoginGate.Attempt, refusal: RosterError, username: String?) -> [Effect] {
        stage = .recording(attempt, refusal: refusal)
        return [.recordFailure(keys: attempt.keys.all, refusal: refusal, username: username)]
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

extension PasskeyLogIn.Found: Equatable where Account: Equatable, Key: Equatable {}
extension PasskeyLogIn.SignedIn: Equatable where Account: Equatable {}
extension PasskeyLogIn.Fact: Equatable where Account: Equatable, Key: Equatable {}
extension PasskeyLogIn.Effect: Equatable where Account: Equatable, Key: Equatable {}
