// Reauthentication — proving again who you are, for an account already known, sans I/O.
//
// RULES
//   Everything that proves who you are after log-in (`current` of a password change; `password` of an email
//   change, a deletion, new recovery codes, TOTP enrolment and disabling; the TOTP `code` of a confirmation; a
//   recovery code) is judged the way a log-in's password is (protocol.md "Failed log-ins"): through the shared `LoginGate`,
//   under the account's key and the requester's, failures counted durably.
//   The rate limit is asked first: a limited attempt answers `rate_limited` with the wait, and nothing is
//   verified or recorded. A password is verified on the hashing lane against the stored hash; a code is handed
//   to the runtime, which alone knows what it is checked against (a pending TOTP secret, a recovery code's hash)
//   and what accepting it does. A refusal is recorded for both keys before it is answered: `wrong_password` for
//   a password, `invalid_code` for a code. An unknown account (`auth.recover` with a name nobody holds) is
//   refused the same way, under the name as typed; its code still goes to the runtime, which does the same work
//   as for a real one (hashing the new password) before it refuses, so the time taken tells nothing.
//
// THEORY OF OPERATION
//   A chain of steps, like `LogIn`'s. Each effect is answered with the fact named beside it:
//     readFailures → failuresRead · readHash → hashRead · verifyPassword → passwordChecked, or
//     checkCode → codeChecked · recordFailure → failureRecorded · finish.
//   `failed` ends the attempt with that error. The attempt begins at the gate at once (its keys are known) and
//   ends there once its verdict is known and recorded, on every path. After `finish` facts are ignored.
//   `Outcome` is what accepting a code did (the TOTP step, the revoked tokens of a redemption); a password
//   has none, so its success is `nil`.

/// What proves who you are once more: the password, or a code the runtime checks.
public enum Proof: Equatable, Sendable {
    case password(Secret)
    case code(String)
}

/// One reauthentication of a known account: facts in, effects out.
public struct Reauthentication<Account: Sendable, Outcome: Sendable>: Sendable {
    public enum Fact: Sendable {
        /// The failure times per key, and the storage's clock they are measured against.
        case failuresRead(times: [String: [Int64]], nowMs: Int64)
        /// The stored hash; nil when the account is gone.
        case hashRead(String?)
        case passwordChecked(Bool)
        /// What accepting the code did; nil when it was refused (nothing changed).
        case codeChecked(Outcome?)
        case failureRecorded
        /// The effect asked for could not be carried out.
        case failed(RosterError)
    }

    public enum Effect: Sendable {
        /// Answer with `failuresRead`.
        case readFailures(keys: [String], windowMs: Int64)
        /// Answer with `hashRead`.
        case readHash(of: Account)
        /// On the hashing lane; answer with `passwordChecked`.
        case verifyPassword(Secret, against: String)
        /// Check the code and, when it is right, do what it is for; answer with `codeChecked`. For no account
        /// the runtime does the same work and refuses, so that the time taken tells nothing.
        case checkCode(String, of: Account?)
        /// Durably, for every key; answer with `failureRecorded`.
        case recordFailure(keys: [String])
        /// A password's success is nil; a code's is what accepting it did.
        case finish(Result<Outcome?, RosterError>)
    }

    private enum Stage {
        case gating
        case reading
        case verifying
        case recording(RosterError)
        case done
    }

    private let account: Account?
    private let proof: Proof
    private let policy: Policy
    private let keys: LoginGate.Keys
    private var attempt: LoginGate.Attempt?
    private var stage = Stage.gating

    /// `account` with its canonical `username` (its rate-limit key), or nil with the name as typed when no account
    /// holds it.
    public init(_ account: Account?, username: String, proof: Proof, requester: Requester, policy: Policy) {
        self.account = account
        self.proof = proof
        self.policy = policy
        keys = LoginGate.Keys(found: account == nil ? nil : username, identifier: username, requester: requester,
                              separatingUnknown: policy.revealUnknownUsers)
    }

    /// The first effect; the attempt counts at the gate from here on.
    public mutating func start(gate: inout LoginGate) -> [Effect] {
        attempt = gate.begin(keys)
        return [.readFailures(keys: keys.read, windowMs: LoginGate.windowMs(policy))]
    }

    public mutating func step(_ fact: Fact, gate: inout LoginGate) -> [Effect] {
        guard let attempt else { return [] }
        switch (stage, fact) {
        case (.gating, .failuresRead(let times, let nowMs)):
            if case .limited(let wait) = gate.decide(attempt, failures: times, nowMs: nowMs, policy: policy) {
                return finish(.failure(.rateLimited(retryAfterMs: wait)), gate: &gate)
            }
            switch proof {
            case .password:
                guard let account else { return refuse(gate: &gate) }
                stage = .reading
                return [.readHash(of: account)]
            case .code(let code):
                stage = .verifying
                return [.checkCode(code, of: account)]
            }
        case (.reading, .hashRead(let hash?)):
            guard case .password(let password) = proof else { return [] }
            stage = .verifying
            return [.verifyPassword(password, against: hash)]
        case (.reading, .hashRead(nil)):
            // Deleted meanwhile: nobody is there to prove anything for.
            return finish(.failure(.unauthenticated), gate: &gate)
        case (.verifying, .passwordChecked(true)) where !provesCode:
            return finish(.success(nil), gate: &gate)
        case (.verifying, .codeChecked(let outcome?)) where provesCode && account != nil:
            return finish(.success(outcome), gate: &gate)
        case (.verifying, .passwordChecked(false)) where !provesCode, (.verifying, .codeChecked) where provesCode:
            // No account, no acceptance, whatever the runtime said.
            return refuse(gate: &gate)
        case (.recording(let refusal), .failureRecorded):
            return finish(.failure(refusal), gate: &gate)
        case (.gating, .failed(let error)), (.reading, .failed(let error)), (.verifying, .failed(let error)),
             (.recording, .failed(let error)):
            return finish(.failure(error), gate: &gate)
        case (.gating, _), (.reading, _), (.verifying, _), (.recording, _), (.done, _):
            // An answer to an effect this attempt did not ask for changes nothing.
            return []
        }
    }

    private var provesCode: Bool {
        if case .code = proof { return true }
        return false
    }

    private mutating func refuse(gate: inout LoginGate) -> [Effect] {
        let refusal: RosterError = switch proof {
        case .password: .wrongPassword
        case .code: .invalidCode
        }
        stage = .recording(refusal)
        return [.recordFailure(keys: keys.all)]
    }

    private mutating func finish(_ result: Result<Outcome?, RosterError>, gate: inout LoginGate) -> [Effect] {
        if let attempt { gate.end(attempt) }
        stage = .done
        return [.finish(result)]
    }
}

extension Reauthentication.Fact: Equatable where Account: Equatable, Outcome: Equatable {}
extension Reauthentication.Effect: Equatable where Account: Equatable, Outcome: Equatable {}
