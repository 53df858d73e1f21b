/// The credential ID `auth.passkey_begin` offers for a name that holds no passkey while unknown users are not
/// revealed: the same for the same name under the same key, so asking twice cannot tell it from a real one.
public enum PasskeyDecoy {
    /// As long as the IDs Chromium's authenticators make.
    public static let length = KeyedHash.length

    /// The decoy for the canonical login identifier `name`.
    public static func credentialID(for name: String, key: SecretKey) -> [UInt8] {
        KeyedHash.of(name, key: key)
    }
}
