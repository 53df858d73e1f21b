/// Compact JSON encoding into bytes. Hand-written because Foundation's writer costs ~36 µs a message here.
public enum JSONWriter {
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(value, into: &out)
        return out
    }

    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let literal): out.append(contentsOf: literal.utf8)
        case .string(let text): writeString(text, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.0, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.1, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    public static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        writeEscaped(text, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// The inside of a JSON string for `text`, without its quotes: a long string may be written in pieces.
    public static func writeEscaped(_ text: String, into out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { String(decoding: JSONWriter.encode(self), as: UTF8.self) }
}

extension JSONWriter {
    /// Indented JSON with two spaces, for people reading a terminal.
    public static func prettyString(_ value: JSONValue, indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch value {
        case .array(let items) where !items.isEmpty:
            return "[\n" + items.map { pad + prettyString($0, indent: indent + 1) }.joined(separator: ",\n") + "\n\(closing)]"
        case .object(let members) where !members.isEmpty:
            return "{\n" + members.map { member in
                var key: [UInt8] = []
                writeString(member.0, into: &key)
                return pad + String(decoding: key, as: UTF8.self) + ": " + prettyString(member.1, indent: indent + 1)
            }.joined(separator: ",\n") + "\n\(closing)}"
        case .array, .object, .null, .bool, .number, .string:
            return value.description
        }
    }
}
