/// What a database must match to be served with this daemon's key file: the key's check value (never the key),
/// and the file it was read from, for the refusal's words. The first daemon stores the value; every later one
/// must bring the same, or it would seal TOTP secrets and key recovery codes that the others cannot read.
public struct KeyCheck: Equatable, Sendable {
    /// `SecretKey.checkValue` of the key in `keyFile`.
    public let value: String
    /// The key file's path.
    public let keyFile: String

    public init(value: String, keyFile: String) {
        self.value = value
        self.keyFile = keyFile
    }
}
