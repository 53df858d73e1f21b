/// One connection's passkey ceremonies in flight: at most one registration and one log-in challenge, and a
/// verified log-in awaiting its TOTP code. Each lives `PasskeyCeremonies.lifetimeMs` from its start and is
/// taken once: a challenge answered (however it ended) or replaced is gone, so a response can never be replayed.
/// Pure: every call is given the time.
public struct PasskeyCeremonies: Sendable {
    /// WebAuthn's recommended ceremony timeout, and the options' `timeout`.
    public static let lifetimeMs: Int64 = 5 * 60_000
    /// The challenge's size in bytes (WebAuthn asks for at least 16).
    public static let challengeBytes = 32

    /// A registration begun by `account` (its user handle and the RP it was begun under).
    public struct Registration: Equatable, Sendable {
        public let challenge: [UInt8]
        public let account: Int64
        public let startedMs: Int64
        public let relyingParty: WebAuthnSettings

        public init(challenge: [UInt8], account: Int64, startedMs: Int64, relyingParty: WebAuthnSettings) {
            self.challenge = challenge
            self.account = account
            self.startedMs = startedMs
            self.relyingParty = relyingParty
        }
    }

    /// A log-in begun, with the credentials it allowed when it named a user.
    public struct LogIn: Equatable, Sendable {
        public let challenge: [UInt8]
        public let allowed: [[UInt8]]?
        public let startedMs: Int64
        public let relyingParty: WebAuthnSettings

        public init(challenge: [UInt8], allowed: [[UInt8]]?, startedMs: Int64, relyingParty: WebAuthnSettings) {
            self.challenge = challenge
            self.allowed = allowed
            self.startedMs = startedMs
            self.relyingParty = relyingParty
        }
    }

    /// A user-present-only assertion that verified on an account with TOTP, kept for the code.
    public struct AwaitingCode: Equatable, Sendable {
        public let credentialID: [UInt8]
        public let allowed: [[UInt8]]?
        public let startedMs: Int64

        public init(credentialID: [UInt8], allowed: [[UInt8]]?, startedMs: Int64) {
            self.credentialID = credentialID
            self.allowed = allowed
            self.startedMs = startedMs
        }
    }

    private var registration: Registration?
    private var logIn: LogIn?
    private var awaitingCode: AwaitingCode?

    public init() {}

    private static func live(_ startedMs: Int64, at nowMs: Int64) -> Bool {
        nowMs >= startedMs && nowMs - startedMs < lifetimeMs
    }

    /// A new registration replaces any other of this connection.
    public mutating func begin(_ registration: Registration) { self.registration = registration }

    /// A new log-in replaces any other, and any assertion still awaiting its code.
    public mutating func begin(_ logIn: LogIn) {
        self.logIn = logIn
        awaitingCode = nil
    }

    /// The registration to finish, once: nil when none was begun, it expired, or it was already taken.
    public mutating func takeRegistration(at nowMs: Int64) -> Registration? {
        defer { registration = nil }
        guard let registration, Self.live(registration.startedMs, at: nowMs) else { return nil }
        return registration
    }

    /// The log-in to finish, once (as `takeRegistration`).
    public mutating func takeLogIn(at nowMs: Int64) -> LogIn? {
        defer { logIn = nil }
        guard let logIn, Self.live(logIn.startedMs, at: nowMs) else { return nil }
        return logIn
    }

    /// Keeps a verified assertion for its code, for what is left of its log-in's lifetime.
    public mutating func awaitCode(_ awaiting: AwaitingCode) { awaitingCode = awaiting }

    /// The assertion awaiting its code, once.
    public mutating func takeAwaitingCode(at nowMs: Int64) -> AwaitingCode? {
        defer { awaitingCode = nil }
        guard let awaitingCode, Self.live(awaitingCode.startedMs, at: nowMs) else { return nil }
        return awaitingCode
    }

    /// A log-out or another log-in ends every ceremony of the connection.
    public mutating func reset() { self = PasskeyCeremonies() }
}
