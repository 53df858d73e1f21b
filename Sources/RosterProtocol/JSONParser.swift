/// A strict RFC 8259 parser over raw bytes: invalid UTF-8, NUL outside strings, trailing garbage and
/// over-deep nesting are all errors, so hostile input gets a parse error rather than a guess.
public struct JSONParser {
    /// Why a document was refused; the offset lets a client find the spot.
    public struct Failure: Error, Equatable {
        public let offset: Int
        public let problem: String
    }

    /// Deep enough for any real request, shallow enough that recursion cannot exhaust the stack.
    public static let maxDepth = 64

    /// The value, refusing an object that holds a key twice (at any depth): which of the two counts is a
    /// guess that readers make differently, so an ambiguous document is an error, not a choice.
    public static func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> JSONValue {
        let (value, duplicate) = try parseKeepingDuplicateKeys(bytes)
        if let duplicate { throw Failure(offset: duplicate.offset, problem: "a key appears twice in one object") }
        return value
    }

    /// The value even when an object holds a key twice, with the shallowest such place, so that a caller can
    /// still say which request was ambiguous.
    public static func parseKeepingDuplicateKeys(_ bytes: some Collection<UInt8>) throws(Failure)
        -> (value: JSONValue, duplicateKey: DuplicateKey?) {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(Failure) in
            var parser = Cursor(bytes: buffer)
            parser.skipWhitespace()
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.fail("unexpected data after the JSON value") }
            return (value, parser.duplicateKey)
        }
    }

    /// An object that holds `key` twice, `depth` objects and arrays deep (0 for the top level), ending at `offset`.
    public struct DuplicateKey: Equatable, Sendable {
        public let key: String
        public let depth: Int
        public let offset: Int
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// The shallowest repeated key seen so far.
        var duplicateKey: DuplicateKey?

        func fail(_ problem: String) -> Failure { Failure(offset: index, problem: problem) }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws(Failure) -> JSONValue {
            guard depth < JSONParser.maxDepth else { throw fail("nesting deeper than \(JSONParser.maxDepth)") }
            guard let byte = current else { throw fail("unexpected end of input") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw fail("unexpected character")
            }
        }

        mutating func literal(_ word: StaticString) throws(Failure) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw fail("unexpected end of input") }
            let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
            for offset in 0..<count where bytes[index + offset] != expected[offset] {
                throw fail("unexpected character")
            }
            index += count
        }

        mutating func object(depth: Int) throws(Failure) -> JSONValue {
            index += 1
            var members: [(String, JSONValue)] = []
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let key = try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
                members.append((key, try value(depth: depth + 1)))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    noteDuplicate(in: members, depth: depth)
                    return .object(members)
                default: throw fail("expected ',' or '}'")
                }
            }
        }

        /// Keys compare as Swift strings do (canonically equivalent is equal), which is how they are looked up.
        mutating func noteDuplicate(in members: [(String, JSONValue)], depth: Int) {
            guard members.count > 1, depth < duplicateKey?.depth ?? Int.max else { return }
            var repeated: String?
            if members.count <= 8 {
                // A request's handful of members: comparing each pair costs less than hashing them.
                outer: for later in 1..<members.count {
                    for earlier in 0..<later where members[earlier].0 == members[later].0 {
                        repeated = members[later].0
                        break outer
                    }
                }
            } else {
                var seen = Set<String>(minimumCapacity: members.count)
                repeated = members.first { !seen.insert($0.0).inserted }?.0
            }
            if let repeated { duplicateKey = DuplicateKey(key: repeated, depth: depth, offset: index) }
        }

        mutating func array(depth: Int) throws(Failure) -> JSONValue {
            index += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                skipWhitespace()
                items.append(try value(depth: depth + 1))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return .array(items)
                default: throw fail("expected ',' or ']'")
                }
            }
        }

        mutating func number() throws(Failure) -> String {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, isDigit(first) else { throw fail("invalid number") }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if current == UInt8(ascii: ".") {
                index += 1
                guard let digit = current, isDigit(digit) else { throw fail("invalid number") }
                skipDigits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let digit = current, isDigit(digit) else { throw fail("invalid number") }
                skipDigits()
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func skipDigits() {
            while let byte = current, isDigit(byte) { index += 1 }
        }

        mutating func string() throws(Failure) -> String {
            index += 1
            let start = index
            // Fast path: no escapes means the bytes are the string, once proven to be valid UTF-8.
            while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { throw fail("control character in string") }
                index += 1
            }
            guard let stop = current else { throw fail("unterminated string") }
            let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
            if stop == UInt8(ascii: "\"") {
                index += 1
                // ASCII is valid UTF-8 as it stands: no copy, no validation (keys and most values are ASCII).
                if !run.contains(where: { $0 >= 0x80 }) { return String(decoding: run, as: UTF8.self) }
                return try decodeUTF8(Array(run))
            }
            var utf8 = Array(run)
            while true {
                guard let byte = current else { throw fail("unterminated string") }
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return try decodeUTF8(utf8)
                case UInt8(ascii: "\\"):
                    index += 1
                    try escape(into: &utf8)
                case 0..<0x20:
                    throw fail("control character in string")
                default:
                    utf8.append(byte)
                    index += 1
                }
            }
        }

        func decodeUTF8(_ utf8: [UInt8]) throws(Failure) -> String {
            guard let text = String(validating: utf8, as: UTF8.self) else { throw fail("invalid UTF-8") }
            return text
        }

        mutating func escape(into out: inout [UInt8]) throws(Failure) {
            guard let byte = current else { throw fail("unterminated escape") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                    else { throw fail("unpaired surrogate") }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(code) {
                    throw fail("unpaired surrogate")
                }
                guard let scalar = Unicode.Scalar(code) else { throw fail("invalid escape") }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw fail("invalid escape")
            }
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail("truncated \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw fail("invalid \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }
}
