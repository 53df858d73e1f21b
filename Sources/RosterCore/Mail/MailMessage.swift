// MailMessage — one mail as RFC 5322 bytes with MIME, ready for a sendmail-compatible program's standard input.
//
// RULES
//   Headers, in this order: Date, From, To, Subject, Message-ID, MIME-Version, Content-Type (text/plain,
//   charset=utf-8), Content-Transfer-Encoding (base64), Content-Language (the locale's tag) and Auto-Submitted
//   (auto-generated, so that vacation responders stay quiet, RFC 3834). Nothing else, and every value either a
//   fixed text, a checked address, a locale tag, or free text through MailHeaderText: no input can add a header,
//   end one early or break a line. Lines end in CRLF and stay within 78 characters, but for an address, which
//   cannot be folded and is at most 254 (well inside RFC 5322's 998).
//   The body is the words' text with CRLF line ends, base64 by Foundation's encoder in lines of 76.
//   Time and uniqueness come in: the Date from a wall-clock time the caller read, the Message-ID from bytes the
//   caller drew (random, or an outbox row's id), never from a clock or a generator here. The same inputs give
//   the same bytes, so a mail handed off again after a crash is the same mail with the same Message-ID.

import Foundation

/// The settings every mail of one daemon shares: whom it is from, where links point, how long a code lasts.
public struct MailComposer: Hashable, Sendable {
    public let from: MailMailbox
    public let baseURL: MailBaseURL
    /// How long a mailed code stays valid (`CodeMinutes=`), as the mails say.
    public let codeMinutes: Int

    /// The default of `CodeMinutes=`.
    public static let defaultCodeMinutes = 15
    /// The longest validity the mails will state: a day, which is also how long the outbox keeps trying.
    public static let codeMinutesRange = 1...1_440

    public init(from: MailMailbox, baseURL: MailBaseURL,
                codeMinutes: Int = MailComposer.defaultCodeMinutes) throws(MailMessageError) {
        guard MailComposer.codeMinutesRange.contains(codeMinutes) else { throw .codeMinutesOutOfRange }
        self.from = from
        self.baseURL = baseURL
        self.codeMinutes = codeMinutes
    }

    /// A Message-ID on the From address's domain, from bytes that make it unique.
    public func messageID(unique bytes: [UInt8]) throws(MailMessageError) -> MailMessageID {
        try MailMessageID(unique: bytes, domain: from.address.domain)
    }

    /// The mail of `kind` about the account `username`, to `to`, in `locale`, dated `dateUnixMs`.
    ///
    /// `username` is named in the subject and the body and goes into a recovery link; it may be any text but
    /// one with a control character, which is refused.
    public func message(kind: MailKind, username: String, to: MailMailbox, locale: RosterLocale, dateUnixMs: Int64,
                        messageID: MailMessageID) throws(MailMessageError) -> MailMessage {
        if username.unicodeScalars.contains(where: MailAddress.isControl) { throw .textHasControl(.username) }
        var link = ""
        if case .recovery(let code) = kind { link = baseURL.recoveryLink(username: username, code: code) }
        let words = MailTexts.words(for: kind, locale: locale, username: username, minutes: codeMinutes, link: link)
        return MailMessage(kind: kind.name, from: from, to: to, locale: locale, words: words, dateUnixMs: dateUnixMs,
                           messageID: messageID)
    }
}

/// One composed mail: who it is from and to, its words, and its RFC 5322 bytes.
///
/// Printing one shows its kind and the recipient's domain only: its body may hold a code.
public struct MailMessage: Hashable, Sendable, CustomStringConvertible, CustomReflectable {
    /// The kind, without any code.
    public let kind: MailKindName
    public let from: MailMailbox
    public let to: MailMailbox
    public let locale: RosterLocale
    public let words: MailWords
    public let dateUnixMs: Int64
    public let messageID: MailMessageID
    /// The whole message, headers and body, CRLF line ends: what the sendmail program reads on standard input.
    public let bytes: [UInt8]

    init(kind: MailKindName, from: MailMailbox, to: MailMailbox, locale: RosterLocale, words: MailWords,
         dateUnixMs: Int64, messageID: MailMessageID) {
        self.kind = kind
        self.from = from
        self.to = to
        self.locale = locale
        self.words = words
        self.dateUnixMs = dateUnixMs
        self.messageID = messageID
        var text = "Date: " + UTCTime.rfc5322(unixMs: dateUnixMs) + "\r\n"
        text += MailHeaderText.mailbox(name: "From", from)
        text += MailHeaderText.mailbox(name: "To", to)
        text += MailHeaderText.unstructured(name: "Subject", words.subject)
        text += "Message-ID: " + messageID.text + "\r\n"
        text += "MIME-Version: 1.0\r\n"
        text += "Content-Type: text/plain; charset=utf-8\r\n"
        text += "Content-Transfer-Encoding: base64\r\n"
        text += "Content-Language: " + locale.rawValue + "\r\n"
        text += "Auto-Submitted: auto-generated\r\n"
        text += "\r\n"
        bytes = Array(text.utf8) + MailMessage.base64Body(words.body)
    }

    /// The envelope sender, for `sendmail -f`.
    public var envelopeSender: MailAddress { from.address }
    /// The one recipient, for sendmail's argument after `--`.
    public var recipient: MailAddress { to.address }

    public var description: String { "\(kind.rawValue) mail to \(to.address.domain)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// Base64 line length for a body (RFC 2045 §6.8: at most 76).
    static let bodyLineLength = 76

    /// The body's text with CRLF line ends, ending in one, as base64 lines.
    static func base64Body(_ text: String) -> [UInt8] {
        var crlf: [UInt8] = []
        for byte in text.utf8 {
            if byte == 0x0A { crlf.append(0x0D) }
            crlf.append(byte)
        }
        if crlf.last != 0x0A { crlf += [0x0D, 0x0A] }
        let encoded = Array(Data(crlf).base64EncodedString().utf8)
        var out: [UInt8] = []
        out.reserveCapacity(encoded.count + encoded.count / bodyLineLength * 2 + 2)
        var start = 0
        while start < encoded.count {
            let end = min(start + bodyLineLength, encoded.count)
            out += encoded[start..<end]
            out += [0x0D, 0x0A]
            start = end
        }
        return out
    }
}

/// A Message-ID, `<hex@domain>`: unique by the bytes it was made from, on a domain the sender names.
public struct MailMessageID: Hashable, Sendable, CustomStringConvertible {
    /// The header's value, with its angle brackets.
    public let text: String

    /// How many bytes may make one unique: 8 (a row id) to 64.
    public static let uniqueByteRange = 8...64

    /// From `unique` (random bytes, or an outbox row's id) and a host name.
    public init(unique bytes: [UInt8], domain: String) throws(MailMessageError) {
        guard MailMessageID.uniqueByteRange.contains(bytes.count), domain.utf8.allSatisfy({ $0 < 0x80 }),
              MailAddress.isHostName(Array(domain.utf8)[...]) else { throw .messageIDMalformed }
        let hex = Array("0123456789abcdef".utf8)
        var local: [UInt8] = []
        for byte in bytes { local += [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]] }
        text = "<" + String(decoding: local, as: UTF8.self) + "@" + domain + ">"
    }

    public var description: String { text }
}

extension UTCTime {
    /// `unixMs` as RFC 5322 writes a date, in UTC: `Thu, 03 Dec 2026 08:04:31 +0000` (milliseconds dropped).
    public static func rfc5322(unixMs: Int64) -> String {
        let seconds = unixMs >= 0 ? unixMs / 1_000 : (unixMs - 999) / 1_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // 1970-01-01 was a Thursday.
        let weekday = ((days + 4) % 7 + 7) % 7
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(weekday)]), \(two(day)) \(months[Int(month - 1)]) \(year) "
            + "\(two(secondOfDay / 3_600)):\(two(secondOfDay % 3_600 / 60)):\(two(secondOfDay % 60)) +0000"
    }
}
