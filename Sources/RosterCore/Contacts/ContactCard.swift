// ContactCard — a contact's vCard as a CardDAV client sent it, and the rules that read it.
//
// RULES
//   A uid is 1–255 bytes of UTF-8 with no control character and no `/` (it is the last part of a card's URL).
//   A card put by a client is stored byte for byte: what is read back is exactly what was sent. It must be at
//   most `maxBytes` bytes of UTF-8 without NUL, hold exactly one BEGIN:VCARD … END:VCARD, and say VERSION 3.0
//   or 4.0. Roster's own fields are taken from it as an import takes them (FN or N, the first TEL, EMAIL and
//   NOTE), except that a field breaking a contact rule is left out (phone, email) or cut to its limit (name,
//   note) and the card kept: a phone's card is the user's, whatever Roster can index of it.
//   A contact without a sent card (added by `contacts.add`, imported, or stored before cards) has the card
//   `VCard.card` makes of its fields, with its uid.
//   contacts.update of a sent card rewrites the lines of the fields it changed (FN and N for the name, the first
//   TEL, the first EMAIL, NOTE; removed when the field is cleared, added before END:VCARD when missing) and keeps
//   every other byte.

/// The rules of contact uids.
public enum ContactUID {
    /// The longest uid, in UTF-8 bytes.
    public static let maxBytes = 255

    /// Whether `uid` may name a contact: 1–255 bytes of UTF-8, no control character, no `/`.
    public static func isValid(_ uid: String) -> Bool {
        let count = uid.utf8.count
        guard count >= 1, count <= maxBytes else { return false }
        return !uid.unicodeScalars.contains { $0 == "/" || $0.properties.generalCategory == .control }
    }

    /// A random UUID (version 4) in lower case, for a contact whose card brought no uid of its own.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}

/// A card a client put, as read: the fields Roster takes from it and the UID the card itself names.
public struct CardContent: Equatable, Sendable {
    public var draft: ContactDraft
    /// The card's own UID property, if any (the contact's uid is the one the client put it under).
    public var uid: String?

    public init(draft: ContactDraft, uid: String?) {
        self.draft = draft
        self.uid = uid
    }
}

/// Why a put card was refused: `problem` is the `invalid_params` reason (the card's own, or the import's).
public struct CardError: Error, Equatable, Sendable {
    public var problem: ParamProblem

    public init(_ problem: ParamProblem) { self.problem = problem }

    /// An import's reason for the card; a reason with no param problem of its own reads as a malformed line.
    init(importReason: String) { self.problem = ParamProblem(rawValue: importReason) ?? .malformedLine }

    /// Longer than `VCard.maxCardBytes`.
    public static let tooLarge = CardError(.cardTooLarge)
    /// No card, or more than one, in the text.
    public static let oneCardRequired = CardError(.oneCardRequired)
    /// VERSION missing or other than 3.0 and 4.0.
    public static let unsupportedVersion = CardError(.unsupportedVersion)
    /// A NUL character, which no vCard holds (and PostgreSQL cannot store).
    public static let nulCharacter = CardError(.malformedLine)
}

extension VCard {
    /// The largest card a client may put: 1 MiB of PHOTO in base64 and room for the rest.
    public static let maxCardBytes = 1_572_864

    /// The card a client put, read as `contacts.put_vcard` takes it; see the rules above.
    public static func read(card text: String) -> Result<CardContent, CardError> {
        guard text.utf8.count <= maxCardBytes else { return .failure(.tooLarge) }
        guard !text.utf8.contains(0) else { return .failure(.nulCharacter) }
        var begins = 0
        var versions: [String] = []
        for (scalars, _) in VCardLine.logicalLines(text) {
            guard let property = VCardLine(scalars, line: 0) else { continue }
            let value = String(String.UnicodeScalarView(property.value)).trimmingWhitespace()
            switch property.name {
            case "BEGIN" where value.uppercased() == "VCARD": begins += 1
            case "VERSION": versions.append(value)
            default: break
            }
        }
        guard begins == 1 else { return .failure(.oneCardRequired) }
        let parsed = parse(text, fields: .keepCard)
        if let error = parsed.errors.first { return .failure(CardError(importReason: error.reason)) }
        guard let card = parsed.contacts.first, parsed.contacts.count == 1 else { return .failure(.oneCardRequired) }
        guard versions.count == 1, versions[0] == "3.0" || versions[0] == "4.0" else {
            return .failure(.unsupportedVersion)
        }
        return .success(CardContent(draft: card.draft, uid: card.uid))
    }
}

/// A contact's card as it is served: the card a client sent, or the one its fields make.
public struct ContactCard: Equatable, Sendable {
    public var contact: Contact
    /// The card exactly as a client sent it; nil when the contact's fields are its whole card.
    public var sent: String?

    public init(contact: Contact, sent: String?) {
        self.contact = contact
        self.sent = sent
    }

    /// The card's text: what was sent, byte for byte, or the card of the contact's fields.
    public var text: String { sent ?? VCard.card(contact.draft, uid: contact.uid) }
}
