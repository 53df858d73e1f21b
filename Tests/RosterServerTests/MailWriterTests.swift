import Foundation
import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage
import Testing
@testable import RosterServer

/// The outbox's mails as the writer makes them: composed, dated by the wall clock, sealed with the mail key; a
/// code mail's code inside the sealed message only, its keyed hash beside it.
@Suite("Mail writer")
struct MailWriterTests {
    let wall = ManualWallClock(nowMs: 1_796_144_048_000)
    let writer: MailWriter
    let alice = MailRecipient(account: 7, display: "Alice1", email: "alice@example.com", locale: .en)

    init() throws {
        let composer = try MailSettings(from: try MailMailbox(parsing: "Roster <roster@example.org>"),
                                        baseURL: try MailBaseURL(parsing: "https://roster.example.org"))
            .composer(hostName: "ignored")
        writer = MailWriter(composer: composer, secrets: testSecrets, wallClock: wall)
    }

    private func opened(_ mail: QueuedMail) throws -> (headers: [String], body: String) {
        try openedMail(mail.sealedMessage)
    }

    private func code(in body: String) throws -> String { try mailedCode(in: body) }

    @Test func aVerificationMailCarriesItsCodeSealedAndItsHashApart() throws {
        let mail = try writer.codeMail(.verifyEmail, to: alice)
        #expect(mail.account == 7 && mail.kind == .verification && mail.recipient == "alice@example.com")
        let stored = try #require(mail.code)
        #expect(stored.purpose == .verifyEmail && stored.email == "alice@example.com")
        #expect(stored.expiresAtMs == wall.nowMs() + 15 * 60_000)
        let (headers, body) = try opened(mail)
        #expect(headers.contains("Date: Tue, 01 Dec 2026 16:54:08 +0000"))
        #expect(headers.contains("From: Roster <roster@example.org>"))
        #expect(headers.contains("To: Alice1 <alice@example.com>"))
        #expect(headers.contains("Content-Language: en"))
        let messageID = try #require(headers.first { $0.hasPrefix("Message-ID: <") })
        #expect(messageID.hasSuffix("@example.org>") && messageID.utf8.count == "Message-ID: <@example.org>".utf8.count + 32)
        let digits = try code(in: body)
        #expect(MailCodes.hash(digits, key: testSecrets.mailCodes) == stored.codeHash)
        // Nothing outside the sealed message holds the digits.
        #expect(!"\(mail)".contains(digits) && !mail.sealedMessage.containsSubsequence(Array(digits.utf8)))
    }

    @Test func aRecoveryMailCarriesItsLinkAndEachMailItsOwnCodeAndMessageID() throws {
        let first = try writer.codeMail(.recover, to: MailRecipient(account: 7, display: "张三", email: "zs@example.cn",
                                                                    locale: .zhHans))
        let second = try writer.codeMail(.recover, to: alice)
        #expect(first.kind == .recovery && first.code?.purpose == .recover)
        let (headers, body) = try opened(first)
        let digits = try code(in: body)
        #expect(body.contains("https://roster.example.org/recover?user=%E5%BC%A0%E4%B8%89&code=\(digits)"))
        #expect(headers.contains("Content-Language: zh-Hans"))
        let firstID = headers.first { $0.hasPrefix("Message-ID") }
        let secondID = try opened(second).headers.first { $0.hasPrefix("Message-ID") }
        #expect(firstID != nil && firstID != secondID)
    }

    @Test func aNoticeHasNoCodeAndNoLink() throws {
        for notice in MailNotice.allCases {
            let mail = try writer.notice(notice, to: alice)
            #expect(mail.code == nil && mail.kind == notice.kind.name)
            let body = try opened(mail).body
            #expect(!body.contains("http"), "\(notice)")
            #expect(!body.split(whereSeparator: { !$0.isNumber }).contains { $0.count == 6 }, "\(notice)")
        }
    }

    @Test func anAddressNoMailCanCarryIsRefusedWithItsReason() {
        let cases: [(String, MailMessageError)] = [("ü@example.com", .addressNotASCII), ("alice", .addressMalformed),
                                                   ("a\r\nBcc: x@y.example", .addressHasControl)]
        for (email, error) in cases {
            var recipient = alice
            recipient.email = email
            #expect(throws: MailWritingError.message(error)) { try writer.notice(.passwordChanged, to: recipient) }
            #expect(MailWritingError.message(error).reason == error.reason)
        }
        var named = alice
        named.display = "Alice\u{0}"
        #expect(throws: MailWritingError.message(.textHasControl(.displayName))) { try writer.codeMail(.verifyEmail, to: named) }
    }
}

private extension Array where Element == UInt8 {
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { Array(self[$0..<($0 + needle.count)]) == needle }
    }
}
