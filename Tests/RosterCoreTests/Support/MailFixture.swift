import Foundation
import RosterCore

/// One daemon's mail settings and the parts every mail test shares.
enum MailFixture {
    static let code = try! MailCode("042917")
    static let composer = try! MailComposer(from: MailMailbox(parsing: "Roster <roster@example.org>"),
                                            baseURL: MailBaseURL(parsing: "https://roster.example.org/"))
    static let id = try! composer.messageID(unique: Array(0..<16))
    /// 2026-12-03T08:00:00Z.
    static let dateUnixMs: Int64 = 1_796_284_800_000
    static let recipient = try! MailMailbox(parsing: "alice@example.net")

    static let headerNames = ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Content-Type",
                              "Content-Transfer-Encoding", "Content-Language", "Auto-Submitted"]

    static func kind(_ name: MailKindName) -> MailKind {
        switch name {
        case .verification: .verification(code: code)
        case .recovery: .recovery(code: code)
        case .passwordChanged: .passwordChanged
        case .emailChanged: .emailChanged
        case .totpDisabled: .totpDisabled
        case .recoveryCodesMade: .recoveryCodesMade
        case .accountDeleted: .accountDeleted
        }
    }

    static func message(_ name: MailKindName, locale: RosterLocale, username: String = "alice",
                        to: MailMailbox = recipient) throws -> MailMessage {
        try composer.message(kind: kind(name), username: username, to: to, locale: locale, dateUnixMs: dateUnixMs,
                             messageID: id)
    }

    /// What a mail's bytes break of the wire rules: printable ASCII and CRLF only, lines of at most 78
    /// characters, and exactly the expected headers in order.
    static func shapeProblems(_ bytes: [UInt8]) -> [String] {
        var problems: [String] = []
        for (index, byte) in bytes.enumerated() {
            let crlf = (byte == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A)
                || (byte == 0x0A && index > 0 && bytes[index - 1] == 0x0D)
            if !(0x20...0x7E).contains(byte) && !crlf { problems.append("byte \(byte) at \(index)") }
        }
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        for line in lines where line.utf8.count > 78 { problems.append("a line of \(line.utf8.count): \(line)") }
        guard let blank = lines.firstIndex(of: "") else { return problems + ["no end of headers"] }
        let names = lines[..<blank].filter { !$0.hasPrefix(" ") }.map { String($0.prefix { $0 != ":" }) }
        if names != headerNames { problems.append("headers \(names)") }
        if lines.last != "" { problems.append("the last line has no CRLF") }
        return problems
    }

    /// The unfolded value of header `name`.
    static func header(_ name: String, in bytes: [UInt8]) -> String? {
        let head = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n\r\n").first ?? ""
        let unfolded = head.replacingOccurrences(of: "\r\n ", with: " ")
        for line in unfolded.components(separatedBy: "\r\n") where line.hasPrefix(name + ": ") {
            return String(line.dropFirst(name.count + 2))
        }
        return nil
    }
}
