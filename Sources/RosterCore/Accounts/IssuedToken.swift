/// A session token just made for an account: what the client is given, and the hash that was stored.
public struct IssuedToken: Equatable, Sendable, CustomStringConvertible {
    /// For the client only; never stored, logged or sent anywhere else.
    public let bearer: String
    public let hash: [UInt8]

    public init(bearer: String, hash: [UInt8]) {
        self.bearer = bearer
        self.hash = hash
    }

    // A token interpolated into a log line shows nothing of itself.
    public var description: String { "IssuedToken(redacted)" }
}
