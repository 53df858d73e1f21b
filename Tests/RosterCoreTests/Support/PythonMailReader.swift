import Foundation

/// Python's own `email` package (`/usr/bin/python3`, `BytesParser(policy=email.policy.default)`) reading composed
/// mails, as an independent reader: what it decodes is what a real mail program would show.
enum PythonMailReader {
    /// What Python made of one message.
    struct Reading: Decodable {
        /// Header names in order, and their values as Python decodes them (encoded-words undone, folds joined).
        let names: [String]
        let values: [String]
        /// Every defect Python registered, on the message or on any header.
        let defects: [String]
        let fromAddresses: [[String]]
        let toAddresses: [[String]]
        let subject: String
        let dateISO: String?
        let messageID: String
        let contentType: String
        let charset: String?
        let transferEncoding: String
        let body: String
    }

    static let script = #"""
    import base64, email.parser, email.policy, json, sys
    out = []
    for raw in json.load(sys.stdin):
        msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(base64.b64decode(raw))
        defects = [repr(d) for d in msg.defects]
        names, values = [], []
        for name, value in msg.items():
            names.append(name)
            values.append(str(value))
            defects += [name + ": " + repr(d) for d in getattr(value, "defects", ())]
        def addresses(header):
            return [[a.display_name, a.addr_spec] for a in msg[header].addresses] if msg[header] is not None else []
        date = msg["Date"]
        out.append({
            "names": names, "values": values, "defects": defects,
            "fromAddresses": addresses("From"), "toAddresses": addresses("To"),
            "subject": str(msg["Subject"]),
            "dateISO": date.datetime.isoformat() if date is not None and date.datetime is not None else None,
            "messageID": str(msg["Message-ID"]),
            "contentType": msg.get_content_type(), "charset": msg.get_content_charset(),
            "transferEncoding": msg["Content-Transfer-Encoding"].cte,
            "body": msg.get_content(),
        })
    json.dump(out, sys.stdout)
    """#

    enum Failure: Error, CustomStringConvertible {
        case exited(Int32, String)
        var description: String {
            switch self {
            case .exited(let status, let stderr): "python3 exited \(status): \(stderr)"
            }
        }
    }

    /// One run of Python over every message, in order.
    static func read(_ messages: [[UInt8]]) throws -> [Reading] {
        let input = try JSONSerialization.data(withJSONObject: messages.map { Data($0).base64EncodedString() })
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-I", "-c", script]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Python reads all of its input before it writes, so writing first cannot fill both pipes at once.
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure.exited(process.terminationStatus, String(decoding: errors, as: UTF8.self))
        }
        return try JSONDecoder().decode([Reading].self, from: output)
    }
}
