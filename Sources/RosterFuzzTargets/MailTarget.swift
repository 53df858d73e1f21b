// The `mail` fuzz target: the mail parsers of configuration text, and a composed mail read back by a small
// independent reader of its own (unfold the headers, decode the encoded-words and the base64 body).

import Foundation
import RosterCore

/// The properties a mailbox, a links' base and a composed mail promise, checked on one fuzzer input.
enum MailTarget {
    static let headerNames = ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Content-Type",
                              "Content-Transfer-Encoding", "Content-Language", "Auto-Submitted"]

    static func run(_ bytes: [UInt8]) -> [String] {
        let text = String(decoding: bytes, as: UTF8.self)
        let hasControl = text.unicodeScalars.contains {
            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029
        }
        var broken: [String] = []
        if let address = try? MailAddress(parsing: text) {
            if address.text != text || hasControl || !text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                broken.append("mail: an address taken is not one printable ASCII token")
            }
        }
        if let mailbox = try? MailMailbox(parsing: text) {
            if (try? MailMailbox(parsing: mailbox.description)) != mailbox {
                broken.append("mail: a mailbox written back reads as another")
            }
        }
        if let base = try? MailBaseURL(parsing: text) {
            if (try? MailBaseURL(parsing: base.text)) != base { broken.append("mail: a links' base reads as another") }
            if let code = try? MailCode("123456"),
               !base.recoveryLink(username: text, code: code).utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                broken.append("mail: a recovery link holds a space or a byte outside ASCII")
            }
        }
        broken += composed(text, hasControl: hasControl)
        return broken
    }

    /// The text as the username and as the recipient's display name of one mail of every kind.
    private static func composed(_ text: String, hasControl: Bool) -> [String] {
        guard let from = try? MailMailbox(parsing: "Roster <roster@example.org>"),
              let to = try? MailAddress(parsing: "someone@example.net"),
              let base = try? MailBaseURL(parsing: "https://roster.example.org"),
              let composer = try? MailComposer(from: from, baseURL: base),
              let id = try? composer.messageID(unique: Array(repeating: 7, count: 16)),
              let code = try? MailCode("042917") else { return ["mail: the fixed parts were refused"] }
        let recipient: MailMailbox
        do {
            recipient = try MailMailbox(displayName: text, address: to)
        } catch {
            return hasControl && error == .textHasControl(.displayName)
                ? [] : ["mail: a display name was refused as \(error.reason)"]
        }
        if hasControl { return ["mail: a display name with a control character was taken"] }
        var broken: [String] = []
        for (index, kind) in [MailKind.verification(code: code), .recovery(code: code), .accountDeleted].enumerated() {
            let message: MailMessage
            do {
                message = try composer.message(kind: kind, username: text, to: recipient, locale: .allCases[index % 4],
                                               dateUnixMs: 1_796_284_800_000, messageID: id)
            } catch {
                broken.append("mail: a username without a control character was refused as \(error.reason)")
                continue
            }
            broken += readBack(message)
        }
        return broken
    }

    /// Reads the bytes as a mail reader would and compares them with what the message says it holds.
    private static func readBack(_ message: MailMessage) -> [String] {
        let bytes = message.bytes
        var broken: [String] = []
        for (index, byte) in bytes.enumerated() {
            let ok = (0x20...0x7E).contains(byte) || (byte == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A)
                || (byte == 0x0A && index > 0 && bytes[index - 1] == 0x0D)
            if !ok { return ["mail: a byte \(byte) outside printable ASCII and CRLF at \(index)"] }
        }
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        guard let blank = lines.firstIndex(of: "") else { return ["mail: no blank line ends the headers"] }
        if let long = lines.first(where: { $0.utf8.count > 78 }) {
            broken.append("mail: a line of \(long.utf8.count) characters")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines[..<blank] {
            if line.hasPrefix(" ") {
                guard !headers.isEmpty else { return ["mail: a fold before any header"] }
                headers[headers.count - 1].value += line
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), String(line[line.index(after: colon)...].trimmingPrefix(" "))))
            } else {
                return ["mail: a header line without a name"]
            }
        }
        if headers.map(\.name) != headerNames { broken.append("mail: headers \(headers.map(\.name))") }
        if let subject = headers.first(where: { $0.name == "Subject" }), decoded(subject.value) != message.words.subject {
            broken.append("mail: the subject reads back as another")
        }
        if let to = headers.first(where: { $0.name == "To" }), message.to.displayName == nil {
            if to.value != message.to.address.text { broken.append("mail: the bare recipient reads back as another") }
        } else if let to = headers.first(where: { $0.name == "To" }) {
            let angle = " <" + message.to.address.text + ">"
            if !to.value.hasSuffix(angle) || decoded(String(to.value.dropLast(angle.count))) != message.to.shownDisplayName {
                broken.append("mail: the recipient reads back as another")
            }
        }
        let body = Data(base64Encoded: lines[(blank + 1)...].joined())
        let expected = message.words.body.replacingOccurrences(of: "\n", with: "\r\n")
        if body.map({ String(decoding: $0, as: UTF8.self) }) != expected { broken.append("mail: the body reads back as another") }
        return broken
    }

    /// An unfolded value: plain text as it is, or encoded-words separated by folding spaces, joined.
    private static func decoded(_ value: String) -> String? {
        let words = value.split(separator: " ", omittingEmptySubsequences: false)
        guard words.allSatisfy({ $0.hasPrefix("=?utf-8?B?") && $0.hasSuffix("?=") }) else {
            return value.contains("=?") ? nil : value
        }
        var bytes: [UInt8] = []
        for word in words {
            guard let data = Data(base64Encoded: String(word.dropFirst(10).dropLast(2))) else { return nil }
            // Each word must hold whole UTF-8 sequences: a reader may decode the words one by one.
            guard String(validating: Array(data), as: UTF8.self) != nil else { return nil }
            bytes += data
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
