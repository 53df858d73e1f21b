/// What a database must match to be served with this daemon's key file: the key's check value (never the key),
/// and the file it was read from, for the refusal's words. The first daemon stores the value; every later one
/// must bring the same, or it would seal TOTP secrets and key recovery codes that the others cannot read.
public struct KeyCheck: Sendable {
    /// `SecretKey.checkValue` of the key in `keyFile`.
    public let value: String
    /// The key file's path.
    public let keyFile: String
    /// Whether a sealed TOTP secret of the database opens with this key: asked of one, before the first value is
    /// stored in a database that holds secrets already (one from before the check), so that a wrong key is not
    /// the one adopted.
    public let opensSealed: @Sendable ([UInt8]) -> Bool

    public init(value: String, keyFile: String, opensSealed: @escaping @Sendable ([UInt8]) -> Bool) {
        self.value = value
        self.keyFile = keyFile
        self.opensSealed = opensSealed
    }
}
