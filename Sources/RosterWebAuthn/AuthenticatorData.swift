/// The fixed head of an authenticator data (WebAuthn §6.1): which relying party, the flags and the sign count.
/// What follows it (attested credential data, extensions) libfido2 reads.
struct AuthenticatorData: Equatable {
    var rpIDHash: [UInt8]
    var flags: AuthenticatorFlags
    var signCount: UInt32

    static let headLength = 37

    /// `.format` when the bytes are shorter than the head.
    init(_ bytes: [UInt8]) throws(PasskeyRejection) {
        guard bytes.count >= Self.headLength else { throw .format }
        rpIDHash = Array(bytes[0..<32])
        flags = AuthenticatorFlags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// §7.1 steps 13–14 (§7.2 steps 15–16): this relying party's, with the user present.
    func check(relyingParty: RelyingParty) throws(PasskeyRejection) {
        guard rpIDHash == relyingParty.idHash else { throw .rpID }
        guard flags.contains(.userPresent) else { throw .userPresent }
    }
}

/// The authenticator data's flags byte.
public struct AuthenticatorFlags: OptionSet, Equatable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let userPresent = AuthenticatorFlags(rawValue: 0x01)
    public static let userVerified = AuthenticatorFlags(rawValue: 0x04)
    public static let backupEligible = AuthenticatorFlags(rawValue: 0x08)
    public static let backedUp = AuthenticatorFlags(rawValue: 0x10)
    public static let attestedCredentialData = AuthenticatorFlags(rawValue: 0x40)
    public static let extensionData = AuthenticatorFlags(rawValue: 0x80)
}
