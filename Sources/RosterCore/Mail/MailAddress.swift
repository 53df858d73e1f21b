// MailAddress and MailMailbox — the addresses a mail is written from and to.
//
// RULES
//   An address is `local@domain` as RFC 5322 writes it without quoting: the local part a dot-atom (atext runs
//   joined by single dots, at most 64), the domain host-name labels (letters, digits, inner hyphens, each 1...63,
//   at most 253 in all), the whole at most 254 (RFC 5321's path). ASCII only: without SMTPUTF8, which the host's
//   mail system may lack, nothing else is carried. Quoted local parts and address literals are refused rather
//   than written, so every accepted address is one token that no header syntax can read differently.
//   A control character (any Cc, U+2028, U+2029) anywhere is refused first with its own reason: a line break is
//   how a header is injected, and it must never reach one.
//   A mailbox is an address with an optional display name; the configuration writes it `Name <address>` or just
//   the address. The name is free text (any script, emoji, right-to-left) with no control character, its spaces
//   trimmed and single (as mail readers show a name, so what is written is what is read); it is
//   written as atoms when it is plain ASCII words and as RFC 2047 encoded-words otherwise (MailHeaderText).

/// One mail address, checked: it can stand as a header's address and as a sendmail argument as it is.
public struct MailAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address as written, `local@domain`.
    public let text: String
    /// The part after the `@`.
    public let domain: String

    /// The longest path RFC 5321 allows, and its parts' limits.
    public static let maxLength = 254
    static let maxLocalLength = 64
    static let maxDomainLength = 253
    static let maxLabelLength = 63

    /// Checks `raw`, refusing with the first rule it breaks (control characters, then ASCII, length, shape).
    public init(parsing raw: String) throws(MailMessageError) {
        if raw.unicodeScalars.contains(where: MailAddress.isControl) { throw .addressHasControl }
        guard raw.utf8.allSatisfy({ $0 < 0x80 }) else { throw .addressNotASCII }
        let bytes = Array(raw.utf8)
        guard bytes.count <= MailAddress.maxLength else { throw .addressTooLong }
        guard let at = bytes.lastIndex(of: UInt8(ascii: "@")) else { throw .addressMalformed }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard local.count <= MailAddress.maxLocalLength, domain.count <= MailAddress.maxDomainLength else {
            throw .addressTooLong
        }
        guard MailAddress.isDotAtom(local), MailAddress.isHostName(domain) else { throw .addressMalformed }
        text = raw
        self.domain = String(decoding: domain, as: UTF8.self)
    }

    /// For a literal known to pass `init(parsing:)` (a default), which a test holds it to.
    init(known text: String, domain: String) {
        self.text = text
        self.domain = domain
    }

    public var description: String { text }

    /// Cc (C0, DEL, C1) and the two Unicode line and paragraph separators, which some readers break lines at.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// RFC 5322 atext: letters, digits and ``!#$%&'*+-/=?^_`{|}~``.
    public static func isAtext(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }

    private static func isDotAtom(_ bytes: ArraySlice<UInt8>) -> Bool {
        let runs = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return !bytes.isEmpty && runs.allSatisfy { !$0.isEmpty && $0.allSatisfy(isAtext) }
    }

    /// Dot-separated labels of letters, digits and inner hyphens; a single label (a bare host name) is fine.
    static func isHostName(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxDomainLength else { return false }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            guard let first = label.first, let last = label.last, label.count <= maxLabelLength,
                  first != UInt8(ascii: "-"), last != UInt8(ascii: "-") else { return false }
            return label.allSatisfy { byte in
                byte == UInt8(ascii: "-") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            }
        }
    }
}

/// An address with the name a reader sees for it, as in `From: Roster <roster@example.org>`.
public struct MailMailbox: Hashable, Sendable, CustomStringConvertible {
    /// The name shown for the address; nil or empty writes the bare address.
    public let displayName: String?
    public let address: MailAddress

    /// A mailbox from parts already apart; the name may be any text without a control character. Its spaces are
    /// trimmed and runs of them made one, as mail readers show a name anyway.
    public init(displayName: String?, address: MailAddress) throws(MailMessageError) {
        if let displayName, displayName.unicodeScalars.contains(where: MailAddress.isControl) {
            throw .textHasControl(.displayName)
        }
        // Spaces are counted as scalars, not characters: a space carrying a combining mark is one Swift Character,
        // but a reader still sees (and collapses) the space in front of the mark.
        let words = displayName.map { name in
            name.unicodeScalars.split(separator: " ").map { String(String.UnicodeScalarView($0)) }.joined(separator: " ")
        }
        self.displayName = words.flatMap { $0.isEmpty ? nil : $0 }
        self.address = address
    }

    /// The bare address, with no name to show.
    public init(address: MailAddress) {
        displayName = nil
        self.address = address
    }

    /// A mailbox as the configuration writes one: `roster@example.org`, `Roster <roster@example.org>` or
    /// `"Roster <the directory>" <roster@example.org>` (the quotes are dropped; no quote or backslash inside them).
    public init(parsing raw: String) throws(MailMessageError) {
        if raw.unicodeScalars.contains(where: MailAddress.isControl) { throw .addressHasControl }
        let scalars = Array(Self.trimmed(Array(raw.unicodeScalars)[...]).unicodeScalars)
        let name: String
        let rest: ArraySlice<Unicode.Scalar>
        if scalars.first == "\"" {
            guard let close = scalars.dropFirst().firstIndex(of: "\"") else { throw .mailboxMalformed }
            name = String(String.UnicodeScalarView(scalars[1..<close]))
            rest = scalars[(close + 1)...]
            guard !name.unicodeScalars.contains("\\"), rest.first == " " || rest.first == "<" else {
                throw .mailboxMalformed
            }
        } else if let open = scalars.firstIndex(of: "<") {
            name = Self.trimmed(scalars[..<open])
            rest = scalars[open...]
            guard !name.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\\" || $0 == ">" }) else {
                throw .mailboxMalformed
            }
        } else {
            try self.init(displayName: nil, address: MailAddress(parsing: String(String.UnicodeScalarView(scalars))))
            return
        }
        let angle = Array(Self.trimmed(rest).unicodeScalars)
        guard angle.count >= 2, angle.first == "<", angle.last == ">" else { throw .mailboxMalformed }
        let inner = angle[1..<(angle.count - 1)]
        guard !inner.contains("<"), !inner.contains(">") else { throw .mailboxMalformed }
        try self.init(displayName: name, address: MailAddress(parsing: String(String.UnicodeScalarView(inner))))
    }

    /// The display name as the header shows it: whole, or cut after whole characters and ended with "…" when it
    /// needs encoding and is longer than the 45 bytes one RFC 2047 word holds.
    public var shownDisplayName: String? { displayName.map(MailHeaderText.shownDisplayName) }

    /// The configuration's way of writing it, which `init(parsing:)` reads back as the same mailbox when the name
    /// holds no quote or backslash (which that syntax cannot carry).
    public var description: String {
        guard let displayName else { return address.text }
        let plain = displayName.unicodeScalars.allSatisfy { $0 != "<" && $0 != ">" && $0 != "\"" }
        return (plain ? displayName : "\"\(displayName)\"") + " <\(address.text)>"
    }

    private static func trimmed(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
              let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
