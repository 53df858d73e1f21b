import Foundation
import Testing
import RosterCore

@Suite("Mail messages")
struct MailMessageTests {
    static let everyKindAndLocale = MailKindName.allCases.flatMap { name in RosterLocale.allCases.map { (name, $0) } }

    @Test(arguments: everyKindAndLocale)
    func everyKindComposesInEveryLocale(name: MailKindName, locale: RosterLocale) throws {
        let message = try MailFixture.message(name, locale: locale)
        #expect(MailFixture.shapeProblems(message.bytes) == [])
        #expect(message.kind == name)
        #expect(message.words.subject.contains("alice"))
        #expect(message.words.body.contains("alice"))
        #expect(message.words.body.hasSuffix("Roster\n"))
        #expect(!message.words.body.contains("\\"), "a line continuation left a backslash")
        #expect(MailFixture.header("Content-Language", in: message.bytes) == locale.rawValue)
        let link = "https://roster.example.org/recover?user=alice&code=042917"
        switch name {
        case .verification:
            #expect(message.words.body.contains("    042917\n"))
            #expect(message.words.body.contains("15"))
            #expect(!message.words.body.contains("http"))
        case .recovery:
            #expect(message.words.body.contains("    042917\n"))
            #expect(message.words.body.contains("\n" + link + "\n"))
            #expect(message.words.body.contains("15"))
        case .passwordChanged, .emailChanged, .totpDisabled, .recoveryCodesMade, .accountDeleted:
            #expect(!message.words.body.contains("042917"))
            #expect(!message.words.body.contains("http"))
        }
        #expect(!message.words.subject.contains("042917"), "a code in the subject shows in every inbox's list")
    }

    /// Each locale has its own words (nothing fell back to another language), and no two kinds share a subject.
    @Test(arguments: RosterLocale.allCases)
    func everyLocaleHasItsOwnWordsForEveryKind(locale: RosterLocale) throws {
        var subjects: Set<String> = []
        for name in MailKindName.allCases {
            let words = try MailFixture.message(name, locale: locale).words
            subjects.insert(words.subject)
            for other in RosterLocale.allCases where other != locale {
                #expect(try MailFixture.message(name, locale: other).words != words, "\(name) in \(locale)")
            }
        }
        #expect(subjects.count == MailKindName.allCases.count)
    }

    @Test func theCodesValidityIsTheConfiguredOne() throws {
        let composer = try MailComposer(from: MailFixture.composer.from, baseURL: MailFixture.composer.baseURL,
                                        codeMinutes: 42)
        for locale in RosterLocale.allCases {
            for kind in [MailKind.verification(code: MailFixture.code), .recovery(code: MailFixture.code)] {
                let message = try composer.message(kind: kind, username: "bob", to: MailFixture.recipient,
                                                   locale: locale, dateUnixMs: 0, messageID: MailFixture.id)
                #expect(message.words.body.contains("42"))
                #expect(!message.words.body.contains("15"))
            }
        }
        #expect(MailFixture.composer.codeMinutes == 15)
        for minutes in [0, -1, 1_441] {
            #expect(throws: MailMessageError.codeMinutesOutOfRange) {
                try MailComposer(from: MailFixture.composer.from, baseURL: MailFixture.composer.baseURL,
                                 codeMinutes: minutes)
            }
        }
    }

    @Test func theEnglishTextsReadAsWritten() throws {
        let message = try MailFixture.message(.verification, locale: .en)
        #expect(message.words.subject == "Verify the email address of the Roster account alice")
        #expect(message.words.body == """
            Hello alice,

            Your verification code is:

                042917

            Enter it to confirm that this address belongs to the Roster account alice. The code is valid for 15 \
            minutes and works once.

            If this was not you, ignore this message: the address stays unverified and nothing changes.

            Roster

            """)
    }

    @Test func theHeadersAreTheFixedOnesAndTheGivenOnes() throws {
        let message = try MailFixture.message(.passwordChanged, locale: .en)
        let text = String(decoding: message.bytes, as: UTF8.self)
        #expect(text.hasPrefix("""
            Date: Thu, 03 Dec 2026 08:00:00 +0000\r
            From: Roster <roster@example.org>\r
            To: alice@example.net\r
            Subject: The password of the Roster account alice was changed\r
            Message-ID: <000102030405060708090a0b0c0d0e0f@example.org>\r
            MIME-Version: 1.0\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: base64\r
            Content-Language: en\r
            Auto-Submitted: auto-generated\r
            \r

            """))
        let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        let lines = body.components(separatedBy: "\r\n").dropLast()
        #expect(lines.dropLast().allSatisfy { $0.utf8.count == 76 })
        let decoded = try #require(Data(base64Encoded: lines.joined()))
        #expect(String(decoding: decoded, as: UTF8.self) == message.words.body.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(message.envelopeSender.text == "roster@example.org")
        #expect(message.recipient.text == "alice@example.net")
    }

    @Test func theSameInputsMakeTheSameBytes() throws {
        #expect(try MailFixture.message(.recovery, locale: .vi).bytes == MailFixture.message(.recovery, locale: .vi).bytes)
        let other = try MailFixture.composer.messageID(unique: Array(repeating: 9, count: 16))
        let again = try MailFixture.composer.message(kind: .accountDeleted, username: "alice", to: MailFixture.recipient,
                                                     locale: .ko, dateUnixMs: MailFixture.dateUnixMs, messageID: other)
        #expect(try again.bytes != MailFixture.message(.accountDeleted, locale: .ko).bytes)
    }

    @Test(arguments: [
        (Int64(0), "Thu, 01 Jan 1970 00:00:00 +0000"), (-1, "Wed, 31 Dec 1969 23:59:59 +0000"),
        (951_782_400_000, "Tue, 29 Feb 2000 00:00:00 +0000"), (1_796_284_800_999, "Thu, 03 Dec 2026 08:00:00 +0000"),
        (1_798_761_599_000, "Thu, 31 Dec 2026 23:59:59 +0000"), (4_102_444_800_000, "Fri, 01 Jan 2100 00:00:00 +0000"),
    ])
    func datesAreWrittenAsRFC5322Says(unixMs: Int64, text: String) {
        #expect(UTCTime.rfc5322(unixMs: unixMs) == text)
    }

    @Test func messageIDsComeFromTheGivenBytesOnAHostName() throws {
        #expect(try MailMessageID(unique: Array(repeating: 0xAB, count: 8), domain: "mx.example.org").text
                == "<abababababababab@mx.example.org>")
        #expect(try MailMessageID(unique: Array(repeating: 1, count: 64), domain: "localhost").text.utf8.count == 140)
        for (bytes, domain) in [(7, "example.org"), (65, "example.org"), (16, ""), (16, "exa mple.org"),
                                (16, "example.org>\r\nBcc: v@x.org"), (16, "bücher.de"), (16, "-x.org")] {
            #expect(throws: MailMessageError.messageIDMalformed) {
                try MailMessageID(unique: Array(repeating: 1, count: bytes), domain: domain)
            }
        }
    }

    @Test func codesAreSixASCIIDigits() throws {
        #expect(try MailCode("000000").exposed == "000000")
        for bad in ["", "12345", "1234567", "12345a", "١٢٣٤٥٦", "12 345", "123456\n", "１２３４５６"] {
            #expect(throws: MailMessageError.codeMalformed) { try MailCode(bad) }
        }
    }

    @Test func printingAKindOrAMessageNeverShowsItsCode() throws {
        let kind = MailKind.recovery(code: MailFixture.code)
        let message = try MailFixture.message(.recovery, locale: .en)
        var dumped = ""
        dump(kind, to: &dumped)
        dump(message, to: &dumped)
        for text in ["\(kind)", String(reflecting: kind), "\(MailFixture.code)", String(reflecting: MailFixture.code),
                     "\(message)", String(reflecting: message), dumped] {
            #expect(!text.contains("042917"), "\(text)")
        }
        #expect("\(message)" == "recovery mail to example.net")
        #expect(kind.code?.exposed == "042917")
        #expect(MailKind.totpDisabled.code == nil)
    }

    /// A subject longer than a line is folded into encoded-words of whole characters: no word holds half of a
    /// UTF-8 sequence, and a grapheme (a family emoji, a flag) is never split between two words.
    @Test func longSubjectsFoldIntoWordsOfWholeCharacters() throws {
        let family = "👨‍👩‍👧‍👦"
        for username in [String(repeating: family, count: 12), String(repeating: "𝔘", count: 256),
                         "🇰🇷" + String(repeating: "a", count: 37) + family] {
            let message = try MailFixture.message(.verification, locale: .en, username: username)
            #expect(MailFixture.shapeProblems(message.bytes) == [])
            let words = try #require(MailFixture.header("Subject", in: message.bytes)).split(separator: " ")
            #expect(words.count > 1)
            var pieces: [String] = []
            for word in words {
                #expect(word.hasPrefix("=?utf-8?B?") && word.hasSuffix("?="))
                let data = try #require(Data(base64Encoded: String(word.dropFirst(10).dropLast(2))))
                #expect(data.count <= 42)
                pieces.append(try #require(String(validating: Array(data), as: UTF8.self)))
            }
            #expect(pieces.joined() == message.words.subject)
            // A grapheme split between two words would join into one character fewer than the parts hold.
            #expect(pieces.joined().count == pieces.map(\.count).reduce(0, +))
        }
    }

    @Test func aShortPlainSubjectIsWrittenAsItIsAndAnyOtherEncoded() throws {
        #expect(MailFixture.header("Subject", in: try MailFixture.message(.recovery, locale: .en).bytes)
                == "Recover the Roster account alice")
        let lookalike = try MailFixture.message(.recovery, locale: .en, username: "=?utf-8?B?QQ==?=")
        #expect(MailFixture.header("Subject", in: lookalike.bytes)?.hasPrefix("=?utf-8?B?UmVjb3Zlc") == true)
    }

    /// The fuzzer's first find: a name starting with `?` made the plain-text check read before the first byte.
    @Test func aNameThatStartsWithAQuestionMarkIsWritten() throws {
        let to = try MailMailbox(displayName: "?who", address: MailFixture.recipient.address)
        let message = try MailFixture.message(.accountDeleted, locale: .en, username: "?", to: to)
        #expect(MailFixture.shapeProblems(message.bytes) == [])
        #expect(MailFixture.header("To", in: message.bytes) == "?who <alice@example.net>")
    }

    /// The fuzzer's find: a run of spaces ending in one that carries a combining mark is one Swift Character
    /// short of a run, but Python's reader still collapses it, so the name is made single-spaced by scalars.
    @Test func spacesInANameAreCollapsedAsReadersCollapseThem() throws {
        let address = MailFixture.recipient.address
        let marked = try MailMailbox(displayName: "__      \u{301}e  ", address: address)
        #expect(marked.displayName == "__ \u{301}e")
        let spaced = try MailMailbox(displayName: "  a  b\u{e9}   c ", address: address)
        #expect(spaced.displayName == "a b\u{e9} c")
        #expect(spaced.shownDisplayName == "a b\u{e9} c")
        let blank = try MailMailbox(displayName: "   ", address: address)
        #expect(blank.displayName == nil)
    }

    @Test func aDisplayNameIsOneEncodedWordOrFoldedAtoms() throws {
        let address = MailFixture.recipient.address
        let long = try MailMailbox(displayName: String(repeating: "长", count: 40), address: address)
        #expect(long.shownDisplayName == String(repeating: "长", count: 14) + "…")
        let fits = try MailMailbox(displayName: String(repeating: "长", count: 15), address: address)
        #expect(fits.shownDisplayName == fits.displayName)
        let marks = try MailMailbox(displayName: "x" + String(repeating: "\u{301}", count: 50), address: address)
        #expect(marks.shownDisplayName == "x" + String(repeating: "\u{301}", count: 20) + "…")
        let atoms = try MailMailbox(displayName: String(repeating: "Word ", count: 30), address: address)
        #expect(atoms.shownDisplayName == atoms.displayName)
        let message = try MailFixture.message(.passwordChanged, locale: .en, to: atoms)
        #expect(MailFixture.shapeProblems(message.bytes) == [])
        #expect(MailFixture.header("To", in: message.bytes) == (atoms.displayName ?? "") + " <alice@example.net>")
        let encoded = try MailFixture.message(.passwordChanged, locale: .en, to: long)
        let to = try #require(MailFixture.header("To", in: encoded.bytes))
        #expect(to.hasPrefix("=?utf-8?B?") && to.hasSuffix("?= <alice@example.net>"))
        #expect(to.components(separatedBy: "=?utf-8?B?").count == 2)
    }

    @Test func kindNamesAreStable() {
        #expect(MailKindName.allCases.map(\.rawValue) == ["verification", "recovery", "password_changed", "email_changed",
                                                          "totp_disabled", "recovery_codes_made", "account_deleted"])
    }
}
