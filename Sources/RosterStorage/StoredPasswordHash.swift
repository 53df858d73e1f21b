import RosterRuntime

/// The one rule for what a backend stores as a password hash: a `$argon2id$` string, as `PasswordHasher` makes
/// them. Anything else (a plain password passed by mistake, a hash of another kind) is refused before it is
/// written, by every backend alike; each schema checks the prefix again as a last line.
public enum StoredPasswordHash {
    /// How every storable hash begins.
    public static let prefix = "$argon2id$"

    /// Whether `hash` may be stored.
    public static func isStorable(_ hash: String) -> Bool { hash.hasPrefix(prefix) }

    /// What a call answers for a hash it refused, logged once here so no backend words it again.
    public static func refusal(logging logger: Logger) -> StorageFailure {
        logger.error("refused to store a password hash that is not Argon2id")
        return .other
    }
}
