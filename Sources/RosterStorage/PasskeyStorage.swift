import RosterCore

/// WebAuthn credentials (passkeys) and the user handle they are registered under (protocol.md §Storage). The
/// storage keeps what a log-in checks against (the public key, its algorithm and the last sign count) and what the
/// account's owner sees (a name and times); it verifies nothing: challenges, signatures and origins are the
/// server's. A credential id is unique across the whole database, whoever owns it, so an authenticator's
/// credential belongs to one account only; an account has at most `limit` passkeys (`PasskeyLimits.perAccount`),
/// held across every daemon on a shared database. A deletion of the account takes its passkeys and its handle.
///
/// The sign count only moves forward (WebAuthn §7.2 step 21): `usePasskey` is one conditional write, so of two
/// daemons verifying two assertions with one count at the same instant exactly one records it.
///
/// Times: `createdMs` is the backend's clock (the database's with PostgreSQL), whatever the caller put there;
/// `usePasskey`'s `usedMs` is stored as given, the time the server verified the assertion at.
public protocol PasskeyStorage {
    /// The account's WebAuthn user handle; stores `candidate` (random, `PasskeyLimits.userHandleBytes` bytes, made
    /// by the caller) when it has none yet, so every later call answers the same handle, on every daemon. nil when
    /// the account is gone.
    func passkeyUserHandle(of account: AccountID, candidate: [UInt8],
                           completion: @escaping StorageCompletion<[UInt8]?>)

    /// The account a user handle belongs to (a discoverable log-in names no user but its handle); nil for none.
    func account(forUserHandle handle: [UInt8], completion: @escaping StorageCompletion<Account?>)

    /// The account's passkeys, oldest first (by creation, then credential id).
    func passkeys(of account: AccountID, completion: @escaping StorageCompletion<[StoredPasskey]>)

    /// One passkey by credential id with the account that owns it, whoever that is (a log-in); nil for none.
    func passkey(credentialID: [UInt8], completion: @escaping StorageCompletion<OwnedPasskey?>)

    /// Adds a passkey while the account has fewer than `limit`: `.gone` when the account is gone, `.duplicate` when
    /// the credential id is stored (under any account), `.full` at the cap, in that order, each changing nothing.
    /// The added passkey comes back as stored (`createdMs` the backend's clock, `lastUsedMs` nil). `audit`
    /// (`passkey_added`) commits only with `.added`. On a shared database the account's row is locked first, so the
    /// cap holds for daemons adding at the same instant.
    func addPasskey(_ passkey: StoredPasskey, limit: Int, audit: AuditRecord?,
                    completion: @escaping StorageCompletion<PasskeyAddition>)

    /// Removes one of the account's passkeys; false when it was not there (another account's id is not there).
    /// `audit` (`passkey_removed`) and `mail` (a notice, may be empty; under the outbox's cap as every write's
    /// mail) commit only with true. Never refused by a budget: it follows a verified password.
    func removePasskey(of account: AccountID, credentialID: [UInt8], audit: AuditRecord?, mail: [QueuedMail],
                       completion: @escaping StorageCompletion<Bool>)

    /// Records a log-in with the passkey, atomically: when the stored count and `signCount` are both 0 (an
    /// authenticator that keeps no count), or `signCount` is above the stored one, stores `signCount` and `usedMs`
    /// as its last use and answers `.used` with the passkey as stored now; otherwise changes nothing and answers
    /// `.counterWentBack` with the stored count. `.gone` when there is no such passkey. Never refused by a budget:
    /// it follows a verified signature.
    func usePasskey(credentialID: [UInt8], signCount: UInt32, usedMs: Int64,
                    completion: @escaping StorageCompletion<PasskeyUse>)
}

/// The fixed sizes and caps of passkeys.
public enum PasskeyLimits {
    /// Passkeys one account may hold (protocol.md §Limits of v3).
    public static let perAccount = 20
    /// The sizes a credential id may have (WebAuthn: at most 1023 bytes).
    public static let credentialIDBytes = 1...1_023
    /// The size of a user handle as rosterd makes them.
    public static let userHandleBytes = 32
    /// The sizes a stored user handle may have (WebAuthn's `user.id`: 1 to 64 bytes).
    public static let storedUserHandleBytes = 1...64
}

/// One passkey as stored: its public key and counter for log-ins, its name and times for its owner.
public struct StoredPasskey: Equatable, Sendable {
    /// The raw credential id, unique across the whole database.
    public var credentialID: [UInt8]
    public var account: AccountID
    /// The COSE algorithm: -7 (ES256) or -8 (EdDSA).
    public var algorithm: Int
    /// The raw key bytes as libfido2 takes them (ES256: the 64 bytes x‖y; EdDSA: 32).
    public var publicKey: [UInt8]
    /// The authenticator's signature counter as last seen.
    public var signCount: UInt32
    /// The authenticator's transports as the client reported them, kept for `allowCredentials`.
    public var transports: [String]
    public var name: String
    /// Unix milliseconds of its registration, by the backend's clock.
    public var createdMs: Int64
    /// Unix milliseconds of its last log-in; nil until one.
    public var lastUsedMs: Int64?

    public init(credentialID: [UInt8], account: AccountID, algorithm: Int, publicKey: [UInt8], signCount: UInt32,
                transports: [String], name: String, createdMs: Int64 = 0, lastUsedMs: Int64? = nil) {
        self.credentialID = credentialID
        self.account = account
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.signCount = signCount
        self.transports = transports
        self.name = name
        self.createdMs = createdMs
        self.lastUsedMs = lastUsedMs
    }
}

/// A passkey with the account that owns it, as a log-in finds it.
public struct OwnedPasskey: Equatable, Sendable {
    public var passkey: StoredPasskey
    public var account: Account

    public init(passkey: StoredPasskey, account: Account) {
        self.passkey = passkey
        self.account = account
    }
}

/// What `addPasskey` did.
public enum PasskeyAddition: Equatable, Sendable {
    case added(StoredPasskey)
    /// The credential id is stored already, under this account or another.
    case duplicate
    /// The account holds `limit` passkeys.
    case full
    case gone

    /// Whether the passkey was stored (what its audit entry waits for).
    public var isAdded: Bool {
        if case .added = self { true } else { false }
    }
}

/// What `usePasskey` did.
public enum PasskeyUse: Equatable, Sendable {
    /// The log-in is recorded; the passkey as stored now.
    case used(StoredPasskey)
    /// The count did not move forward (a cloned authenticator, or a replay): nothing changed.
    case counterWentBack(stored: UInt32)
    case gone
}

extension StoredPasskey {
    /// Whether an assertion with `signCount` moves this passkey's count forward (WebAuthn §7.2 step 21): both 0
    /// (an authenticator that keeps no count), or above the stored one.
    public func accepts(signCount: UInt32) -> Bool {
        (self.signCount == 0 && signCount == 0) || signCount > self.signCount
    }

    /// Whether the fields a backend checks before storing are in range: the credential id's size and a key.
    public var isStorable: Bool {
        PasskeyLimits.credentialIDBytes.contains(credentialID.count) && !publicKey.isEmpty
    }
}

/// `StoredPasskey.transports` as both backends keep them: one text, a JSON array of strings, so that any list the
/// client sent comes back as it was (no separator a transport could hold) and a NUL is escaped, never stored.
public enum PasskeyTransports {
    /// The canonical text of `transports`: `["a","b"]`, `"` and `\` escaped with a backslash, every other control
    /// character and DEL as `\u00XX`.
    public static func encoded(_ transports: [String]) -> String {
        var out = "["
        for (index, transport) in transports.enumerated() {
            if index > 0 { out += "," }
            out += "\""
            for scalar in transport.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                    let digits = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                default: out.unicodeScalars.append(scalar)
                }
            }
            out += "\""
        }
        return out + "]"
    }

    /// The list `encoded` made `text` from; nil for any other text (a damaged row).
    public static func decoded(_ text: String) -> [String]? {
        var scalars = text.unicodeScalars[...]
        guard scalars.popFirst() == "[" else { return nil }
        var transports: [String] = []
        if scalars.first == "]" {
            scalars.removeFirst()
            return scalars.isEmpty ? [] : nil
        }
        while true {
            guard scalars.popFirst() == "\"" else { return nil }
            var transport = String.UnicodeScalarView()
            while true {
                guard let scalar = scalars.popFirst() else { return nil }
                if scalar == "\"" { break }
                guard scalar == "\\" else {
                    transport.append(scalar)
                    continue
                }
                switch scalars.popFirst() {
                case "\"": transport.append("\"")
                case "\\": transport.append("\\")
                case "u":
                    let digits = String(String.UnicodeScalarView(scalars.prefix(4)))
                    guard digits.unicodeScalars.count == 4,
                          digits.unicodeScalars.allSatisfy(\.properties.isASCIIHexDigit),
                          let value = UInt32(digits, radix: 16),
                          let escaped = Unicode.Scalar(value) else { return nil }
                    scalars.removeFirst(4)
                    transport.append(escaped)
                default: return nil
                }
            }
            transports.append(String(transport))
            switch scalars.popFirst() {
            case ",": continue
            case "]": return scalars.isEmpty ? transports : nil
            default: return nil
            }
        }
    }
}
