import CSodium

/// What a subkey of the master key is for: libsodium's 8-character KDF context, so each use gets its own key.
public enum KeyPurpose: String, Sendable, CaseIterable {
    /// Sealing TOTP secrets (`SecretBox`).
    case totpSeal = "totpseal"
    /// Keying the recovery-code hash (`RecoveryCodes.hash`).
    case recoveryCodes = "rcodes__"
    /// Keying the check value a database keeps of the key it is served with (`SecretKey.checkValue`).
    case keyCheck = "keycheck"
    /// Sealing queued mails, which may carry a code (`SecretBox`).
    case mailSeal = "mailseal"
    /// Keying the mailed-code hash (`MailCodes.hash`).
    case mailCodes = "mcodes__"
    /// Keying the app-password hash (`AppPasswords.hash`).
    case appPasswords = "apppw___"
    /// Keying the credential IDs offered for a name without passkeys (`PasskeyDecoy`).
    case passkeyDecoy = "pkdecoy_"
}

extension SecretKey {
    /// The subkey of this master key for `purpose` (`crypto_kdf_derive_from_key`, subkey id 1).
    public func subkey(for purpose: KeyPurpose) -> SecretKey {
        // Each context is exactly crypto_kdf_CONTEXTBYTES (8) ASCII characters, checked by the tests.
        let context = Array(purpose.rawValue.utf8).map { CChar(bitPattern: $0) }
        return SecretKey { target in
            withBytes { master in
                _ = crypto_kdf_derive_from_key(target, SecretKey.length, 1, context, master)
            }
        }
    }
}

/// The keys the account procedures and the mail sender need, derived from the daemon's key file.
public struct AccountSecrets: Sendable {
    /// Seals and opens TOTP secrets.
    public let totpSeal: SecretKey
    /// Keys the recovery-code hashes.
    public let recoveryCodes: SecretKey
    /// Seals queued mails in the outbox and opens them to hand them off.
    public let mailSeal: SecretKey
    /// Keys the mailed-code hashes.
    public let mailCodes: SecretKey
    /// Keys the app-password hashes.
    public let appPasswords: SecretKey
    /// Keys the decoy credential IDs of names without passkeys.
    public let passkeyDecoys: SecretKey

    /// Every subkey of `master`.
    public init(master: SecretKey) {
        totpSeal = master.subkey(for: .totpSeal)
        recoveryCodes = master.subkey(for: .recoveryCodes)
        mailSeal = master.subkey(for: .mailSeal)
        mailCodes = master.subkey(for: .mailCodes)
        appPasswords = master.subkey(for: .appPasswords)
        passkeyDecoys = master.subkey(for: .passkeyDecoy)
    }

    /// Keys from a random master that exists only in this process (tests, and nothing that stores a secret).
    public static func ephemeral() throws(CryptoError) -> AccountSecrets {
        AccountSecrets(master: try SecretKey.random())
    }
}
