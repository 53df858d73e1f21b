/// Every tunable rule of the forms, log-in and hashing; one value per key of the `[Validation]`, `[Login]` and `[Hashing]` sections.
///
/// `seed` is the seeds' rules exactly. `hardened` follows NIST SP 800-63B and OWASP ASVS.
public struct Policy: Equatable, Sendable {
    /// Which preset the values started from; the startup log names it.
    public enum Preset: String, Sendable, CaseIterable {
        case seed
        case hardened
    }

    public var preset: Preset

    // [Validation]
    public var usernameMinLength: Int
    public var usernameMaxLength: Int
    public var passwordMinLength: Int
    public var passwordMaxLength: Int
    /// Characters refused in usernames (seed: `!@#$%^&*()`).
    public var usernameForbiddenCharacters: ForbiddenCharacters
    /// Characters refused in passwords (seed: `!@#$%^&*()`, hardened: none).
    public var passwordForbiddenCharacters: ForbiddenCharacters
    /// Whether passwords are normalized with NFKC (hardened) rather than OpaqueString's NFC (seed).
    public var passwordNFKC: Bool
    /// Whether passwords go through libpwquality (dictionary and username-derived passwords are refused).
    public var passwordQualityCheck: Bool

    // [Timing]
    public var debounce: Duration
    public var throttle: Duration

    // [Login]
    /// Whether log-in tells an unknown user from a wrong password (seed) or answers `invalid_credentials` (hardened).
    public var revealUnknownUsers: Bool
    public var rateLimitBurst: Int
    public var rateLimitInterval: Duration
    public var sessionIdle: Duration
    /// The most live session tokens one account holds; a log-in past it revokes the least recently used ones.
    public var maxSessionsPerUser: Int = 200

    // [Hashing]
    public var hashMemoryKiB: Int
    public var hashIterations: Int

    public static let seed = Policy(
        preset: .seed,
        usernameMinLength: 6, usernameMaxLength: 64,
        passwordMinLength: 6, passwordMaxLength: 128,
        usernameForbiddenCharacters: ForbiddenCharacters("!@#$%^&*()"),
        passwordForbiddenCharacters: ForbiddenCharacters("!@#$%^&*()"),
        passwordNFKC: false, passwordQualityCheck: false,
        debounce: .milliseconds(500), throttle: .milliseconds(300),
        revealUnknownUsers: true, rateLimitBurst: 10, rateLimitInterval: .seconds(300),
        sessionIdle: .seconds(12 * 3600),
        hashMemoryKiB: 19456, hashIterations: 2)

    public static let hardened: Policy = {
        var policy = Policy.seed
        policy.preset = .hardened
        policy.passwordMinLength = 15
        policy.passwordMaxLength = 128
        policy.passwordForbiddenCharacters = []
        policy.passwordNFKC = true
        policy.passwordQualityCheck = true
        policy.revealUnknownUsers = false
        return policy
    }()

    public static func preset(_ preset: Preset) -> Policy {
        switch preset {
        case .seed: .seed
        case .hardened: .hardened
        }
    }
}
