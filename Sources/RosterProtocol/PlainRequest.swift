import Glibc

/// The request shape that arrives by the thousand (`users.check_username` from a script or a backend), read
/// in one pass without building a `JSONValue` tree (the general parser, params validation and the answer's
/// tree were half of such a request's cost).
///
/// Accepted: one object with `id` (an integer, or a plain string), `method` equal to the method asked for, an
/// optional `jsonrpc` of exactly `"2.0"`, and `params` holding exactly one member, the param asked for, whose
/// value is a plain string; any member order, JSON whitespace anywhere, no member twice. "Plain" text is
/// printable ASCII without `"` or `\`, which reads the same raw as decoded and is written back unchanged, so
/// on every line accepted here the general parser would produce exactly these values. Anything else is
/// declined (nil) and takes the general path with all its rules; the scanner never refuses a line by itself.
public struct PlainRequest: Equatable, Sendable {
    /// The id's bytes as sent, quotes included for a string: echoed back as they are.
    public var id: Range<Int>
    /// The param's value, without its quotes.
    public var value: Range<Int>

    public static func scan(_ line: UnsafeBufferPointer<UInt8>, method: StaticString,
                            param: StaticString) -> PlainRequest? {
        guard let base = line.baseAddress else { return nil }
        var compact = Scanner(base: base, count: line.count)
        if let request = compact.compactRequest(method: method, param: param) { return request }
        var scanner = Scanner(base: base, count: line.count)
        return scanner.request(method: method, param: param)
    }

    private struct Scanner {
        let base: UnsafePointer<UInt8>
        let count: Int
        var index = 0

        /// The exact compact form that RosterClient and most JSON-RPC libraries write, members in the order
        /// jsonrpc, id, method, params and no whitespace, matched piece by piece (a fifth of the general scan).
        /// Anything else returns nil and the general scan decides.
        mutating func compactRequest(method: StaticString, param: StaticString) -> PlainRequest? {
            guard skip(#"{"jsonrpc":"2.0","id":"#), let id = idLiteral(), skip(#","method":""#), skip(method),
                  skip(#"","params":{""#), skip(param), skip(#"":""#),
                  let quote = memchr(base + index, Int32(UInt8(ascii: "\"")), count - index) else { return nil }
            let value = index..<(UnsafeRawPointer(quote) - UnsafeRawPointer(base))
            index = value.upperBound + 1
            guard isPlain(value), skip(#"}}"#), index == count else { return nil }
            return PlainRequest(id: id, value: value)
        }

        /// Consumes `text` if the bytes at the cursor are exactly it.
        mutating func skip(_ text: StaticString) -> Bool {
            let length = text.utf8CodeUnitCount
            guard count - index >= length, memcmp(base + index, text.utf8Start, length) == 0 else { return false }
            index += length
            return true
        }

        mutating func request(method expectedMethod: StaticString, param: StaticString) -> PlainRequest? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var id: Range<Int>?
            var sawMethod = false
            var value: Range<Int>?
            var sawVersion = false
            repeat {
                // Keys and the texts compared with a literal need no check of their bytes: a key holding an
                // escape or a non-ASCII byte cannot equal one, and declines.
                guard let key = quoted(), take(UInt8(ascii: ":")) else { return nil }
                switch Member(key, scanner: self) {
                case .id?:
                    guard id == nil, let literal = idLiteral() else { return nil }
                    id = literal
                case .method?:
                    guard !sawMethod, let name = quoted(), equals(name, expectedMethod) else { return nil }
                    sawMethod = true
                case .jsonrpc?:
                    guard !sawVersion, let version = quoted(), equals(version, "2.0") else { return nil }
                    sawVersion = true
                case .params?:
                    guard value == nil, take(UInt8(ascii: "{")), let name = quoted(), equals(name, param),
                          take(UInt8(ascii: ":")), let text = quoted(), isPlain(text),
                          take(UInt8(ascii: "}")) else { return nil }
                    value = text
                case nil:
                    return nil
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return nil }
            skipWhitespace()
            guard index == count, sawMethod, let id, let value else { return nil }
            return PlainRequest(id: id, value: value)
        }

        private enum Member {
            case id, method, jsonrpc, params

            init?(_ key: Range<Int>, scanner: Scanner) {
                guard !key.isEmpty else { return nil }
                switch scanner.base[key.lowerBound] {
                case UInt8(ascii: "i") where scanner.equals(key, "id"): self = .id
                case UInt8(ascii: "m") where scanner.equals(key, "method"): self = .method
                case UInt8(ascii: "j") where scanner.equals(key, "jsonrpc"): self = .jsonrpc
                case UInt8(ascii: "p") where scanner.equals(key, "params"): self = .params
                default: return nil
                }
            }
        }

        /// The bytes between a `"` and the next one, unchecked.
        mutating func quoted() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")),
                  let quote = memchr(base + index, Int32(UInt8(ascii: "\"")), count - index) else { return nil }
            let start = index
            index = UnsafeRawPointer(quote) - UnsafeRawPointer(base) + 1
            return start..<(index - 1)
        }

        func isPlain(_ range: Range<Int>) -> Bool {
            var position = range.lowerBound
            while position < range.upperBound {
                let byte = base[position]
                guard byte &- 0x20 < 0x5F, byte != UInt8(ascii: "\\") else { return false }
                position &+= 1
            }
            return true
        }

        /// `-?(0|[1-9][0-9]*)`, or a plain string with its quotes.
        mutating func idLiteral() -> Range<Int>? {
            skipWhitespace()
            let start = index
            if index < count, base[index] == UInt8(ascii: "\"") {
                guard let text = quoted(), isPlain(text) else { return nil }
                return start..<index
            }
            if index < count, base[index] == UInt8(ascii: "-") { index += 1 }
            let digits = index
            while index < count, base[index] >= UInt8(ascii: "0"), base[index] <= UInt8(ascii: "9") { index += 1 }
            guard index > digits, base[digits] != UInt8(ascii: "0") || index == digits + 1 else { return nil }
            // A fraction or exponent would still be a number; the general path takes it.
            if index < count, base[index] == UInt8(ascii: ".") || base[index] | 0x20 == UInt8(ascii: "e") {
                return nil
            }
            return start..<index
        }

        /// Skips whitespace, then consumes `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < count, base[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func skipWhitespace() {
            // Compact JSON has none: one comparison settles the usual case.
            if index < count, base[index] > 0x20 { return }
            while index < count {
                switch base[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        func equals(_ range: Range<Int>, _ text: StaticString) -> Bool {
            range.count == text.utf8CodeUnitCount && memcmp(base + range.lowerBound, text.utf8Start, range.count) == 0
        }
    }
}
