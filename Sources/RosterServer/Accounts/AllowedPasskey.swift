import RosterStorage

/// A credential `auth.passkey_begin` offers in `allowCredentials`: a stored passkey, or the decoy of a name without one.
struct AllowedPasskey: Equatable {
    var credentialID: [UInt8]
    var transports: [String]

    /// What a decoy says it travels by: a platform passkey's, the commonest kind.
    static let decoyTransports = ["internal"]

    init(credentialID: [UInt8], transports: [String]) {
        self.credentialID = credentialID
        self.transports = transports
    }

    init(_ stored: StoredPasskey) {
        self.init(credentialID: stored.credentialID, transports: stored.transports)
    }
}
