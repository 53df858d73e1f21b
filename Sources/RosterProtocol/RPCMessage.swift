import RosterCore

/// Builders for every line the server writes: results, errors and events, always with `"jsonrpc":"2.0"`.
public enum RPCMessage {
    public static func result(id: JSONValue, _ result: JSONValue) -> [UInt8] {
        line(.object([("jsonrpc", "2.0"), ("id", id), ("result", result)]))
    }

    /// The start of a result line, up to where the `result` value goes: for a big result written in pieces (off
    /// the loop), which `closeResultLine` then ends. The bytes are those `result(id:_:)` writes.
    public static func openResultLine(id: JSONValue, reservingCapacity capacity: Int = 160) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        out.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        JSONWriter.write(id, into: &out)
        out.append(contentsOf: #","result":"#.utf8)
        return out
    }

    public static func closeResultLine(_ line: inout [UInt8]) {
        line.append(contentsOf: "}\n".utf8)
    }

    public static func error(id: JSONValue, _ error: RosterError, message: String) -> [UInt8] {
        var data: [(String, JSONValue)] = [("reason", .string(error.reason))]
        for (key, value) in error.details {
            switch value {
            case .string(let text): data.append((key, .string(text)))
            case .int(let number): data.append((key, .int(number)))
            }
        }
        let body: JSONValue = .object([
            ("code", .int(Int64(ErrorCodes.code(for: error)))),
            ("message", .string(message)),
            ("data", .object(data)),
        ])
        return line(.object([("jsonrpc", "2.0"), ("id", id), ("error", body)]))
    }

    /// A server-to-client notification: `{"jsonrpc":"2.0","method":"event","params":{"type":…}}`.
    public static func event(type: String, _ members: [(String, JSONValue)]) -> [UInt8] {
        line(.object([("jsonrpc", "2.0"), ("method", "event"), ("params", .object([("type", .string(type))] + members))]))
    }

    private static func line(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        JSONWriter.write(value, into: &out)
        out.append(0x0A)
        return out
    }
}
