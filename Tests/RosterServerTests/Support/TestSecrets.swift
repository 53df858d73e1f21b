import RosterCrypto

/// Key-file subkeys for servers and procedures under test: a random master that lives only in this process.
let testSecrets: AccountSecrets = {
    do {
        return try AccountSecrets.ephemeral()
    } catch {
        fatalError("libsodium is unavailable: \(error)")
    }
}()
