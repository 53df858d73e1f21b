/// Turns raw terminal bytes into keys: control bytes, CSI/SS3 escape sequences and UTF-8 text.
///
/// Bytes may arrive split anywhere, so an unfinished sequence is kept for the next `feed`. A lone ESC cannot
/// be told from the start of a sequence by bytes alone; the caller waits briefly and calls `flush()`, which
/// turns what is pending into an Escape key (the way readline and vim's `ttimeout` do it).
struct KeyDecoder {
    private var pending: [UInt8] = []

    /// Whether bytes are held back waiting for the rest of a sequence.
    var hasPending: Bool { !pending.isEmpty }

    mutating func feed(_ bytes: [UInt8]) -> [Key] {
        pending += bytes
        var keys: [Key] = []
        var index = 0
        while index < pending.count {
            guard let (key, length) = decode(at: index) else { break }
            if let key { keys.append(key) }
            index += length
        }
        pending.removeFirst(index)
        return keys
    }

    /// Gives up waiting: a held ESC is the Escape key, anything else held is dropped as garbage.
    mutating func flush() -> [Key] {
        defer { pending = [] }
        return pending.first == 0x1B ? [.escape] : []
    }

    /// The key at `index` and how many bytes it took (nil key: bytes to skip); nil when more bytes are needed.
    private func decode(at index: Int) -> (Key?, Int)? {
        let byte = pending[index]
        switch byte {
        case 0x1B: return decodeEscape(at: index)
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x09: return (.tab, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x01: return (.lineStart, 1)
        case 0x05: return (.lineEnd, 1)
        case 0x15: return (.killToStart, 1)
        case 0x17: return (.killWord, 1)
        case 0x0B: return (.killToEnd, 1)
        case 0x03: return (.interrupt, 1)
        case 0x04: return (.endOfInput, 1)
        case 0x0C: return (.redraw, 1)
        case 0x02: return (.left, 1)
        case 0x06: return (.right, 1)
        case 0x0E: return (.down, 1)
        case 0x10: return (.up, 1)
        case 0..<0x20: return (nil, 1)
        default: return decodeText(at: index)
        }
    }

    private func decodeEscape(at index: Int) -> (Key?, Int)? {
        guard index + 1 < pending.count else { return nil }
        let introducer = pending[index + 1]
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else {
            // ESC then an ordinary byte: Escape pressed just before typing; the byte is decoded on its own.
            return (.escape, 1)
        }
        // CSI: parameter bytes 0x30–0x3F, intermediates 0x20–0x2F, then one final byte 0x40–0x7E.
        var end = index + 2
        while end < pending.count, (0x20...0x3F).contains(pending[end]) { end += 1 }
        guard end < pending.count else { return nil }
        let final = pending[end]
        let parameters = String(decoding: pending[(index + 2)..<end], as: UTF8.self)
        let first = parameters.split(separator: ";").first.map(String.init) ?? ""
        let key: Key?
        switch final {
        case UInt8(ascii: "A"): key = .up
        case UInt8(ascii: "B"): key = .down
        case UInt8(ascii: "C"): key = .right
        case UInt8(ascii: "D"): key = .left
        case UInt8(ascii: "H"): key = .home
        case UInt8(ascii: "F"): key = .end
        case UInt8(ascii: "Z"): key = .backTab
        case UInt8(ascii: "~"):
            switch first {
            case "1", "7": key = .home
            case "4", "8": key = .end
            case "3": key = .delete
            default: key = nil
            }
        default: key = nil
        }
        return (key, end - index + 1)
    }

    private func decodeText(at index: Int) -> (Key?, Int)? {
        let lead = pending[index]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        case 0x20..<0x80: length = 1
        default: return (nil, 1)  // a stray continuation byte or an invalid lead
        }
        guard index + length <= pending.count else { return nil }
        let bytes = pending[index..<(index + length)]
        guard bytes.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }) else { return (nil, 1) }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let character = text.first, text.unicodeScalars.first?.value != 0xFFFD else { return (nil, length) }
        return (.text(character), length)
    }
}
