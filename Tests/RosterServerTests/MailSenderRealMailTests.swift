import Foundation
import RosterCore
import RosterCrypto
import RosterMailTesting
import RosterRuntime
import RosterStorage
import Testing
@testable import RosterServer

/// The sender on a real loop and its real mail lane, handing off through a real mail system (`ThrowawayMail`:
/// msmtp relaying to a throwaway aiosmtpd server): a mail the writer made arrives as written, and one the server
/// refuses is left queued for a retry.
@Suite("Mail sender through msmtp")
struct MailSenderRealMailTests {
    @Test(.enabled(if: ThrowawayMail.available, "msmtp-mta or python3-aiosmtpd is not installed (make test-deps installs them)"))
    func aWrittenMailArrivesAndARefusedOneIsRetried() throws {
        let directory = try ScratchDirectory()
        let server = try ThrowawayMail.SMTPServer(directory)
        let program = try ThrowawayMail.msmtpWrapper(in: directory, port: server.port)
        let settings = MailSettings(sendmail: program, from: try MailMailbox(parsing: "Roster <roster@example.org>"))
        let clock = SystemWallClock()
        let writer = MailWriter(composer: try settings.composer(hostName: "h"), secrets: testSecrets, wallClock: clock)
        let storage = FakeMailStorage()
        let mail = try writer.codeMail(.verifyEmail, to: MailRecipient(account: 7, display: "alice1",
                                                                       email: "alice@example.com", locale: .en))
        let delivered = storage.queue(recipient: mail.recipient, sealed: mail.sealedMessage, queuedAtMs: clock.nowMs())
        let refused = storage.queue(kind: .passwordChanged, recipient: "nobody@example.com",
                                    sealed: try writer.notice(.passwordChanged, to: MailRecipient(
                                        account: 8, display: "nobody1", email: "nobody@example.com", locale: .en))
                                        .sealedMessage, queuedAtMs: clock.nowMs())

        let loop = try EventLoop(signals: [])
        let lane = SendmailLane(threads: 2, loop: loop)
        let log = LevelledLog()
        let sender = MailSender(scheduler: loop, storage: storage.bound, lane: lane, seal: testSecrets.mailSeal,
                                wallClock: clock, claimant: try MailSender.uniqueClaimant(hostName: "h", pid: getpid()),
                                auditPeer: AuditPeer(uid: 0, pid: getpid(), client: nil), hostName: "h",
                                settings: settings, logger: Logger(level: .debug, sink: log))
        sender.start()
        let deadline = loop.now + .seconds(15)
        while storage.finishes.count < 2 && loop.now < deadline { try loop.runOnce(timeoutMs: 10) }
        sender.stop()
        lane.stop()

        let outcomes = Dictionary(storage.finishes.map { ($0.id, $0.outcome) }, uniquingKeysWith: { $1 })
        guard case .sent? = outcomes[delivered] else {
            Issue.record("not sent: \(String(describing: outcomes[delivered])); \(log.lines.map(\.message))")
            return
        }
        guard case .retry(_, let error)? = outcomes[refused] else {
            Issue.record("not retried: \(String(describing: outcomes[refused]))")
            return
        }
        #expect(error == "exit_status")
        #expect(log.events("mail_retry").first?.message.contains("…@example.com") == true)

        let received = try #require(server.message(1))
        #expect(received.hasPrefix("MAIL FROM:roster@example.org\nRCPT TO:alice@example.com\n\n"), "\(received)")
        #expect(server.message(2) == nil)
        let message = try #require(SecretBox.open(mail.sealedMessage, key: testSecrets.mailSeal))
        #expect(received.hasSuffix(String(decoding: message, as: UTF8.self)), "the message arrives byte for byte")
        let body = try #require(received.components(separatedBy: "\r\n\r\n").last)
        let text = String(decoding: try #require(Data(base64Encoded: body.replacingOccurrences(of: "\r\n", with: ""))),
                          as: UTF8.self)
        let digits = try #require(text.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 })
        #expect(MailCodes.hash(String(digits), key: testSecrets.mailCodes) == mail.code?.codeHash)
    }
}
