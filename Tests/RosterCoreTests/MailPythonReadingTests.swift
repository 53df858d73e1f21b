import Foundation
import Testing
import RosterCore
import RosterTestSupport

/// Composed mails read by Python's `email` package: the headers decode to what was meant, the body to its words,
/// no defect is registered, and no username or display name, however hostile, adds or changes a header.
@Suite("Mail read back by Python's email parser")
struct MailPythonReadingTests {
    /// What a reader should see of `message`, compared with what Python saw.
    static func problems(_ message: MailMessage, _ reading: PythonMailReader.Reading) -> [String] {
        var problems: [String] = []
        func check<T: Equatable>(_ what: String, _ seen: T, _ meant: T) {
            if seen != meant { problems.append("\(what): \(seen) is not \(meant)") }
        }
        check("defects", reading.defects, [])
        check("headers", reading.names, MailFixture.headerNames)
        check("from", reading.fromAddresses, [[message.from.shownDisplayName ?? "", message.from.address.text]])
        check("to", reading.toAddresses, [[message.to.shownDisplayName ?? "", message.to.address.text]])
        check("subject", reading.subject, message.words.subject)
        check("date", reading.dateISO, "2026-12-03T08:00:00+00:00")
        check("message-id", reading.messageID, message.messageID.text)
        check("content type", reading.contentType, "text/plain")
        check("charset", reading.charset, "utf-8")
        check("transfer encoding", reading.transferEncoding, "base64")
        check("body", reading.body, message.words.body.replacingOccurrences(of: "\n", with: "\r\n"))
        check("language", reading.values.dropFirst(8).first, message.locale.rawValue)
        return problems
    }

    @Test func everyKindInEveryLocaleReadsBackAsWritten() throws {
        let names: [RosterLocale: String] = [.zhHans: "张三", .en: "Alice Liddell", .vi: "Nguyễn Văn Ánh", .ko: "김철수"]
        var messages: [MailMessage] = []
        for kind in MailKindName.allCases {
            for locale in RosterLocale.allCases {
                let to = try MailMailbox(displayName: names[locale], address: MailFixture.recipient.address)
                messages.append(try MailFixture.message(kind, locale: locale, username: names[locale] ?? "", to: to))
                messages.append(try MailFixture.message(kind, locale: locale))
            }
        }
        let readings = try PythonMailReader.read(messages.map(\.bytes))
        #expect(readings.count == messages.count)
        for (message, reading) in zip(messages, readings) {
            #expect(Self.problems(message, reading) == [], "\(message.kind) in \(message.locale)")
        }
    }

    static let hostileUsernames = [
        "=?utf-8?B?QmNjOiB2QHgub3Jn?=", "alice Bcc: evil@x.org", "alice: Bcc", "  two  spaces  ", "a=?b?=c",
        String(repeating: "𝔘", count: 256), String(repeating: "👨‍👩‍👧‍👦", count: 20), "مرحبا\u{202E}cba",
        String(repeating: "e\u{301}", count: 40), "e" + String(repeating: "\u{301}", count: 30), "\u{FEFF}zw\u{200D}j",
        "<script>alert(1)</script>", "a\"b\\c", String(repeating: "x", count: 900), "🏳️‍🌈🇰🇷", "שלום עולם",
    ]

    static let hostileDisplayNames = [
        "Evil\" <x@y.org>, Bcc: z@w.org", "a, b <c@d.org>", "mallory@evil.org", "=?utf-8?B?QmNjOg==?=",
        String(repeating: "A ", count: 40), "Nguyễn, Văn \"Ánh\"", "\u{202E}gro.live@yrollam", "(comment) name",
        String(repeating: "长", count: 200), "x" + String(repeating: "\u{301}", count: 50), "semi;colon", "a\\b",
    ]

    @Test func hostileNamesAreCarriedAsTextAndAddNoHeader() throws {
        var messages: [MailMessage] = []
        for (index, username) in Self.hostileUsernames.enumerated() {
            let locale = RosterLocale.allCases[index % 4]
            messages.append(try MailFixture.message(.recovery, locale: locale, username: username))
        }
        for (index, name) in Self.hostileDisplayNames.enumerated() {
            let to = try MailMailbox(displayName: name, address: MailFixture.recipient.address)
            let locale = RosterLocale.allCases[index % 4]
            messages.append(try MailFixture.message(.verification, locale: locale, username: name, to: to))
        }
        for message in messages {
            #expect(MailFixture.shapeProblems(message.bytes) == [], "\(message.words.subject)")
        }
        let readings = try PythonMailReader.read(messages.map(\.bytes))
        #expect(readings.count == messages.count)
        for (message, reading) in zip(messages, readings) {
            #expect(Self.problems(message, reading) == [], "\(message.words.subject)")
        }
    }

    /// Every input the fuzzer kept (`Fuzz/corpus/mail/`), as a username and as a display name, read by Python too:
    /// the fuzz target's own reader and Python's must agree with what was meant.
    @Test func everyFuzzCorpusInputReadsBack() throws {
        let directory = SourceTree().root + "/Fuzz/corpus/mail"
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        var messages: [MailMessage] = []
        for (index, file) in files.enumerated() {
            let data = try #require(FileManager.default.contents(atPath: directory + "/" + file))
            let text = String(decoding: data, as: UTF8.self)
            guard let to = try? MailMailbox(displayName: text, address: MailFixture.recipient.address) else { continue }
            let kind = MailKindName.allCases[index % MailKindName.allCases.count]
            messages.append(try MailFixture.message(kind, locale: RosterLocale.allCases[index % 4], username: text, to: to))
        }
        #expect(messages.count >= 5)
        let readings = try PythonMailReader.read(messages.map(\.bytes))
        #expect(readings.count == messages.count)
        for (message, reading) in zip(messages, readings) {
            #expect(MailFixture.shapeProblems(message.bytes) == [])
            #expect(Self.problems(message, reading) == [], "\(message.words.subject)")
        }
    }

    /// The From of the configuration, plain or not, reads back as written.
    @Test func theConfiguredSenderReadsBack() throws {
        var messages: [MailMessage] = []
        for raw in ["roster@example.org", "Roster Directory <roster@example.org>", "\"名册 · Roster\" <roster@example.org>",
                    "\"Roster, the <directory>\" <roster@mx.example.org>"] {
            let composer = try MailComposer(from: MailMailbox(parsing: raw), baseURL: MailFixture.composer.baseURL)
            messages.append(try composer.message(kind: .totpDisabled, username: "alice", to: MailFixture.recipient,
                                                 locale: .en, dateUnixMs: MailFixture.dateUnixMs,
                                                 messageID: MailFixture.id))
        }
        let readings = try PythonMailReader.read(messages.map(\.bytes))
        for (message, reading) in zip(messages, readings) {
            #expect(Self.problems(message, reading) == [], "\(message.from)")
        }
    }

    @Test func aUsernameWithAControlCharacterIsRefused() {
        for username in ["alice\r\nBcc: evil@x.org", "a\nb", "a\rb", "a\u{0}", "a\u{1B}[8m", "a\u{85}b", "a\u{2028}b",
                         "a\u{2029}", "a\tb", "a\u{7F}"] {
            #expect(throws: MailMessageError.textHasControl(.username)) {
                try MailFixture.message(.verification, locale: .en, username: username)
            }
        }
    }
}
