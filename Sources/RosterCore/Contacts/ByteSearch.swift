/// Byte-string comparisons on borrowed buffers: the inner loop of a search over 100,000 contacts.
enum ByteSearch {
    /// Where a needle occurs in a folded name, the best place first.
    enum Occurrence {
        case wordStart
        case inside
        case none
    }

    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.count == b.count && hasPrefix(a, b)
    }

    @inline(__always)
    static func hasPrefix(_ text: UnsafeBufferPointer<UInt8>, _ prefix: UnsafeBufferPointer<UInt8>) -> Bool {
        guard prefix.count <= text.count else { return false }
        var index = 0
        while index < prefix.count {
            if text[index] != prefix[index] { return false }
            index += 1
        }
        return true
    }

    @inline(__always)
    static func matches(_ needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, at start: Int)
        -> Bool {
        var index = 1
        while index < needle.count {
            if text[start + index] != needle[index] { return false }
            index += 1
        }
        return true
    }

    static func contains(_ needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first, needle.count <= text.count else { return needle.isEmpty }
        var start = 0
        let last = text.count - needle.count
        while start <= last {
            if text[start] == first && matches(needle, in: text, at: start) { return true }
            start += 1
        }
        return false
    }

    /// Keeps looking after an occurrence inside a word, because a later one may start a word
    /// ("joanne ann" for "ann").
    static func bestOccurrence(of needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>)
        -> Occurrence {
        guard let first = needle.first, needle.count <= text.count else { return .none }
        var found = Occurrence.none
        var start = 0
        let last = text.count - needle.count
        while start <= last {
            if text[start] == first && matches(needle, in: text, at: start) {
                if start == 0 || isSeparator(text[start - 1]) { return .wordStart }
                found = .inside
            }
            start += 1
        }
        return found
    }

    /// ASCII other than letters and digits; the same rule as `ContactSearchKeys.isWordSeparator`, on bytes.
    @inline(__always)
    static func isSeparator(_ byte: UInt8) -> Bool {
        byte < 0x80 && !((0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte))
    }
}
