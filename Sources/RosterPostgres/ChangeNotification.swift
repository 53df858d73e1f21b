import RosterStorage

/// What one daemon tells the others through `pg_notify` when it commits a change they must hear of, and how a
/// payload reads back. Written in the change's own transaction, so it is delivered exactly when the change is
/// visible, and never for a change that rolled back.
///
/// Payload: `1 ORIGIN KIND FIELD…`, separated by single spaces. `1` is the format's version; ORIGIN is the
/// writing instance's random id (its listener drops its own echoes); text fields are percent-encoded (`%`,
/// space and control characters only, so a name stays readable in `pg_stat_activity`); an absent email is an
/// empty field. Kinds: `account-created USERNAME EMAIL`, `account-deleted ID USERNAME EMAIL`,
/// `token-revoked HEX`, `sessions-ended ID`, `contacts-changed ID`, and `email-changed ID USERNAME EMAIL
/// PREVIOUS`, whose three text fields are the UTF-8 bytes in lower-case hex instead (the statement writes them
/// from the row it changed, and hex is what SQL spells exactly; empty for none). A payload must stay under 8,000
/// bytes; every field here is bounded far below it (a username is at most 64 characters, an email 254, so
/// `email-changed` stays under 4,700 bytes).
public struct ChangeNotification: Equatable, Sendable {
    /// The channel every rosterd of a database sends and listens on.
    public static let channel = "roster"

    public var origin: String
    public var change: StorageChange

    public init(origin: String, change: StorageChange) {
        self.origin = origin
        self.change = change
    }

    /// Why a payload was not understood (another version's, or not Roster's).
    public enum ParseFailure: Error, Equatable, Sendable {
        case unknownVersion
        case unknownKind(String)
        case malformed
    }

    /// The payload to send; nil for `.resync`, which a listener infers and nobody sends.
    public var payload: String? {
        var fields: [String]
        switch change {
        case .accountCreated(let username, let email):
            fields = ["account-created", Self.encode(username), Self.encode(email ?? "")]
        case .accountDeleted(let id, let username, let email):
            fields = ["account-deleted", String(id), Self.encode(username), Self.encode(email ?? "")]
        case .tokenRevoked(let hash):
            fields = ["token-revoked", Self.hex(hash)]
        case .sessionsEnded(let account):
            fields = ["sessions-ended", String(account)]
        case .contactsChanged(let account):
            fields = ["contacts-changed", String(account)]
        case .emailChanged(let account, let username, let email, let previous):
            fields = ["email-changed", String(account)] + [username, email ?? "", previous ?? ""].map { Self.hex(Array($0.utf8)) }
        case .resync:
            return nil
        }
        return (["1", origin] + fields).joined(separator: " ")
    }

    /// `tokenRevoked`'s payload up to its hash, for a statement that revokes many tokens and appends each one's
    /// hex itself (`encode(token_hash, 'hex')`, lower-case as `hex`).
    public static func tokenRevokedPrefix(origin: String) -> String {
        ChangeNotification(origin: origin, change: .tokenRevoked(hash: [])).payload ?? ""
    }

    /// `emailChanged`'s payload up to its account id, for the statement that changes the email and appends the
    /// three hex fields from the row itself (`encode(convert_to(…, 'UTF8'), 'hex')`, lower-case as `hex`).
    public static func emailChangedPrefix(origin: String, account: AccountID) -> String {
        (["1", origin, "email-changed", String(account)]).joined(separator: " ")
    }

    /// Reads a payload written by `payload`.
    public static func parse(_ payload: String) throws(ParseFailure) -> ChangeNotification {
        let fields = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard fields.first == "1" else { throw .unknownVersion }
        guard fields.count >= 3, !fields[1].isEmpty else { throw .malformed }
        let origin = fields[1]
        let kind = fields[2]
        let arguments = Array(fields.dropFirst(3))
        let change: StorageChange
        switch kind {
        case "account-created":
            guard arguments.count == 2, let username = decode(arguments[0]), !username.isEmpty,
                  let email = decode(arguments[1]) else { throw .malformed }
            change = .accountCreated(username: username, email: email.isEmpty ? nil : email)
        case "account-deleted":
            guard arguments.count == 3, let id = AccountID(arguments[0]), let username = decode(arguments[1]),
                  !username.isEmpty, let email = decode(arguments[2]) else { throw .malformed }
            change = .accountDeleted(id: id, username: username, email: email.isEmpty ? nil : email)
        case "token-revoked":
            guard arguments.count == 1, let hash = unhex(arguments[0]) else { throw .malformed }
            change = .tokenRevoked(hash: hash)
        case "sessions-ended":
            guard arguments.count == 1, let id = AccountID(arguments[0]) else { throw .malformed }
            change = .sessionsEnded(account: id)
        case "contacts-changed":
            guard arguments.count == 1, let id = AccountID(arguments[0]) else { throw .malformed }
            change = .contactsChanged(account: id)
        case "email-changed":
            let texts = arguments.dropFirst().compactMap { unhex($0).flatMap { String(validating: $0, as: UTF8.self) } }
            guard arguments.count == 4, let id = AccountID(arguments[0]), texts.count == 3, !texts[0].isEmpty else {
                throw .malformed
            }
            change = .emailChanged(account: id, username: texts[0], email: texts[1].isEmpty ? nil : texts[1],
                                   previous: texts[2].isEmpty ? nil : texts[2])
        default:
            throw .unknownKind(kind)
        }
        return ChangeNotification(origin: origin, change: change)
    }

    // MARK: Fields

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "%") || byte <= 0x20 || byte == 0x7F
    }

    static func encode(_ text: String) -> String {
        guard text.utf8.contains(where: needsEscape) else { return text }
        var out: [UInt8] = []
        for byte in text.utf8 {
            if needsEscape(byte) {
                out.append(UInt8(ascii: "%"))
                out.append(contentsOf: hex([byte]).utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ field: String) -> String? {
        guard field.utf8.contains(UInt8(ascii: "%")) else { return field }
        let bytes = Array(field.utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "%") else {
                out.append(bytes[index])
                index += 1
                continue
            }
            guard index + 2 < bytes.count,
                  let byte = unhex(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self))?.first
            else { return nil }
            out.append(byte)
            index += 3
        }
        return String(validating: out, as: UTF8.self)
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    static func unhex(_ text: String) -> [UInt8]? { Hex.decode(Array(text.utf8)[...]) }
}
