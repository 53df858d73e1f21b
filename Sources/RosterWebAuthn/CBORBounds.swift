/// Whether bytes are CBOR items whose every declared length fits in what is left of the input, checked before
/// libcbor sees them: libcbor 0.8 allocates (and zeroes) an array or map for the count its header declares, so a
/// few bytes claiming a billion elements would take gigabytes from the daemon. The scan allocates nothing and is
/// bounded in depth; it judges only sizes and well-formedness, libcbor and libfido2 still read the meaning.
enum CBORBounds {
    /// Deeper nesting than any attestation object or COSE key has.
    static let maximumDepth = 16

    /// True when `bytes` is exactly one well-formed, well-bounded item.
    static func isOneItem(_ bytes: ArraySlice<UInt8>) -> Bool {
        var scanner = Scanner(bytes: bytes)
        return scanner.item(depth: 0) && scanner.atEnd
    }

    /// True when `bytes` is zero or more well-formed, well-bounded items back to back.
    static func areItems(_ bytes: ArraySlice<UInt8>) -> Bool {
        var scanner = Scanner(bytes: bytes)
        while !scanner.atEnd {
            guard scanner.item(depth: 0) else { return false }
        }
        return true
    }

    private struct Scanner {
        var bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        var atEnd: Bool { index >= bytes.endIndex }
        var remaining: Int { bytes.endIndex - index }

        mutating func byte() -> UInt8? {
            guard index < bytes.endIndex else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        /// The header's argument; nil for a malformed one. `indefinite` for additional info 31.
        mutating func argument(_ info: UInt8, indefinite: inout Bool) -> UInt64? {
            indefinite = false
            switch info {
            case 0...23: return UInt64(info)
            case 24...27:
                let count = 1 << Int(info - 24)
                guard remaining >= count else { return nil }
                var value: UInt64 = 0
                for _ in 0..<count { value = value << 8 | UInt64(byte() ?? 0) }
                return value
            case 31:
                indefinite = true
                return 0
            default:
                return nil
            }
        }

        /// One item; false when it is malformed, deeper than allowed, or declares more than the input holds.
        mutating func item(depth: Int) -> Bool {
            guard depth <= CBORBounds.maximumDepth, let head = byte() else { return false }
            let major = head >> 5
            var indefinite = false
            guard let value = argument(head & 0x1F, indefinite: &indefinite) else { return false }
            switch major {
            case 0, 1:
                return !indefinite
            case 2, 3:
                if indefinite { return chunks(major: major) }
                guard value <= UInt64(remaining) else { return false }
                index += Int(value)
                return true
            case 4, 5:
                let per: UInt64 = major == 4 ? 1 : 2
                if indefinite {
                    while true {
                        guard let next = peek() else { return false }
                        if next == 0xFF { index += 1; return true }
                        for _ in 0..<per { guard item(depth: depth + 1) else { return false } }
                    }
                }
                // Every element takes at least a byte, so a count beyond what is left cannot be honest.
                guard value <= UInt64(remaining) / per else { return false }
                for _ in 0..<(value * per) { guard item(depth: depth + 1) else { return false } }
                return true
            case 6:
                return !indefinite && item(depth: depth + 1)
            default:
                // Simple values and floats; a lone break is malformed.
                return !indefinite
            }
        }

        func peek() -> UInt8? { index < bytes.endIndex ? bytes[index] : nil }

        /// An indefinite string's definite chunks of its own major type, up to the break.
        mutating func chunks(major: UInt8) -> Bool {
            while true {
                guard let head = byte() else { return false }
                if head == 0xFF { return true }
                var indefinite = false
                guard head >> 5 == major, let length = argument(head & 0x1F, indefinite: &indefinite), !indefinite,
                      length <= UInt64(remaining) else { return false }
                index += Int(length)
            }
        }
    }
}
