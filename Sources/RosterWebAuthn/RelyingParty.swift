import RosterCrypto

/// Who rosterd is to an authenticator: the RP ID passkeys are bound to, its shown name, and the origins a
/// browser may speak for it from (`[WebAuthn]`).
public struct RelyingParty: Equatable, Sendable {
    public var id: String
    public var name: String
    public var origins: [String]
    /// SHA-256 of the RP ID, which every authenticator data names its relying party by.
    public let idHash: [UInt8]

    public init(id: String, name: String, origins: [String]) {
        self.id = id
        self.name = name
        self.origins = origins
        idHash = (try? SHA256.digest(Array(id.utf8))) ?? []
    }

    public static func == (lhs: RelyingParty, rhs: RelyingParty) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name && lhs.origins == rhs.origins
    }
}
