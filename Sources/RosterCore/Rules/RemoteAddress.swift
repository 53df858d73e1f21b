// RemoteAddress — the address of the person a trusted gateway speaks for (`session.hello` `remote`), sans I/O.
//
// RULES
//   An IPv4 or IPv6 address literal, at most 64 characters: no port, no brackets, no zone (`%eth0`), no prefix
//   length. IPv4 is four decimal parts of 0…255 with no leading zero (`01.2.3.4` is refused: some readers take it
//   for octal, so it names two addresses). IPv6 is RFC 4291's text: up to eight groups of 1…4 hex digits, one `::`
//   standing for at least one zero group, and an IPv4 dotted quad as the last 32 bits.
//   Its text is canonical: IPv4 as parsed (there is one spelling); IPv6 as RFC 5952 writes it (lowercase, no
//   leading zeros, the longest run of two or more zero groups as `::`, the first such run on a tie); an
//   IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is that IPv4 address, since it is the same person's.
//   One subscriber holds an IPv6 /64 and may pick any address in it, so what is limited per remote (failed log-ins,
//   the failed-entry cap, the queue before a log-in) is limited per /64 there; IPv4 is limited per address.

/// An IPv4 or IPv6 address, parsed from a literal and written back in canonical form.
public enum RemoteAddress: Hashable, Sendable {
    case v4(UInt32)
    /// The 128 bits as two halves, network (`high`) first.
    case v6(high: UInt64, low: UInt64)

    /// The longest literal accepted; an IPv6 address with an IPv4 tail needs 45.
    public static let maxLiteralLength = 64

    /// Nil unless `literal` is one address as the rules say.
    public init?(parsing literal: String) {
        guard literal.utf8.count <= Self.maxLiteralLength, !literal.isEmpty else { return nil }
        let bytes = Array(literal.utf8)
        if !bytes.contains(UInt8(ascii: ":")) {
            guard let v4 = Self.parseIPv4(bytes[...]) else { return nil }
            self = .v4(v4)
            return
        }
        guard let groups = Self.parseIPv6(bytes) else { return nil }
        let high = groups[0..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        let low = groups[4..<8].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        if high == 0, low >> 32 == 0xffff {
            self = .v4(UInt32(truncatingIfNeeded: low))
        } else {
            self = .v6(high: high, low: low)
        }
    }

    /// The canonical text (see the rules).
    public var text: String {
        switch self {
        case .v4(let bits): Self.dottedQuad(bits)
        case .v6(let high, let low): Self.rfc5952(high: high, low: low)
        }
    }

    /// What limits count under: the address itself for IPv4, its /64 network for IPv6.
    public var limitNetwork: RemoteAddress {
        switch self {
        case .v4: self
        case .v6(let high, _): .v6(high: high, low: 0)
        }
    }

    /// The rate limit's and the caps' key: `remote:203.0.113.5`, or `remote:2001:db8:0:1::/64`.
    public var limitKey: String {
        switch self {
        case .v4: "remote:" + text
        case .v6: "remote:" + limitNetwork.text + "/64"
        }
    }

    // MARK: Parsing

    private static func parseIPv4(_ bytes: ArraySlice<UInt8>) -> UInt32? {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bits: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            // A leading zero would read as octal to some.
            guard part.count == 1 || part.first != UInt8(ascii: "0") else { return nil }
            let value = part.reduce(UInt32(0)) { $0 * 10 + UInt32($1 - 0x30) }
            guard value <= 255 else { return nil }
            bits = bits << 8 | value
        }
        return bits
    }

    /// The eight groups, or nil.
    private static func parseIPv6(_ bytes: [UInt8]) -> [UInt16]? {
        let text = bytes[...]
        guard let gap = doubleColon(in: text) else {
            guard let groups = groups(text, quadAllowed: true), groups.count == 8 else { return nil }
            return groups
        }
        let after = text[(gap + 2)...]
        guard doubleColon(in: after) == nil,
              let head = groups(text[..<gap], quadAllowed: false), let tail = groups(after, quadAllowed: true),
              head.count + tail.count <= 7 // `::` stands for at least one zero group
        else { return nil }
        return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
    }

    /// The groups of colon-separated `text` (none when it is empty); a dotted quad, only last, gives two.
    private static func groups(_ text: ArraySlice<UInt8>, quadAllowed: Bool) -> [UInt16]? {
        guard !text.isEmpty else { return [] }
        let pieces = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, piece) in pieces.enumerated() {
            if quadAllowed, index == pieces.count - 1, piece.contains(UInt8(ascii: ".")) {
                guard let quad = parseIPv4(piece) else { return nil }
                groups += [UInt16(quad >> 16), UInt16(truncatingIfNeeded: quad)]
            } else {
                guard let group = hexGroup(piece) else { return nil }
                groups.append(group)
            }
        }
        return groups
    }

    private static func doubleColon(in text: ArraySlice<UInt8>) -> Int? {
        text.indices.dropLast().first { text[$0] == UInt8(ascii: ":") && text[$0 + 1] == UInt8(ascii: ":") }
    }

    private static func hexGroup(_ piece: ArraySlice<UInt8>) -> UInt16? {
        guard (1...4).contains(piece.count) else { return nil }
        var value: UInt16 = 0
        for byte in piece {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x61...0x66: digit = byte - 0x61 + 10
            case 0x41...0x46: digit = byte - 0x41 + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    // MARK: Writing

    private static func dottedQuad(_ bits: UInt32) -> String {
        [24, 16, 8, 0].map { String(bits >> UInt32($0) & 0xff) }.joined(separator: ".")
    }

    private static func rfc5952(high: UInt64, low: UInt64) -> String {
        let groups = [48, 32, 16, 0].map { UInt16(truncatingIfNeeded: high >> UInt64($0)) }
            + [48, 32, 16, 0].map { UInt16(truncatingIfNeeded: low >> UInt64($0)) }
        // The longest run of two or more zero groups, the first on a tie.
        var best: Range<Int>?
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            let start = index
            while index < 8, groups[index] == 0 { index += 1 }
            if index - start >= 2, index - start > (best?.count ?? 0) { best = start..<index }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard let best else { return hex.joined(separator: ":") }
        return hex[..<best.lowerBound].joined(separator: ":") + "::" + hex[best.upperBound...].joined(separator: ":")
    }
}
