import Glibc
import RosterMailTesting
import RosterRuntime
import RosterTestSupport
import Testing

/// The hand-off through a real mail system (`ThrowawayMail`: msmtp relaying to a throwaway aiosmtpd server).
@Suite("Sendmail through msmtp")
struct SendmailRealMailTests {
    @Test(.enabled(if: ThrowawayMail.available, "msmtp-mta or python3-aiosmtpd is not installed (make test-deps installs them)"))
    func aMessageReachesTheSMTPServerAsGiven() throws {
        let directory = try ScratchDirectory()
        let server = try ThrowawayMail.SMTPServer(directory)
        let program = SendmailProgram(path: try ThrowawayMail.msmtpWrapper(in: directory, port: server.port))
        let message = """
            From: Roster <roster@example.org>\r
            To: alice@example.com\r
            Subject: =?UTF-8?B?5L2g5aW9?=\r
            Message-ID: <test-1@example.org>\r
            MIME-Version: 1.0\r
            Content-Type: text/plain; charset=UTF-8\r
            Content-Transfer-Encoding: 8bit\r
            \r
            Your code is 123456.\r
            .\r
            A line of one dot stays.\r

            """
        let outcome = program.handOff(Array(message.utf8), from: "roster@example.org", to: "alice@example.com")
        #expect(outcome == .handedOff)
        let received = try #require(server.message(1))
        #expect(received.hasPrefix("MAIL FROM:roster@example.org\nRCPT TO:alice@example.com\n\n"), "\(received)")
        #expect(received.contains("Message-ID: <test-1@example.org>"))
        #expect(received.contains("Your code is 123456.\r\n.\r\nA line of one dot stays."), "\(received)")
    }

    @Test(.enabled(if: ThrowawayMail.available, "msmtp-mta or python3-aiosmtpd is not installed (make test-deps installs them)"))
    func aRecipientTheServerRefusesIsAFailureWithMsmtpsWords() throws {
        let directory = try ScratchDirectory()
        let server = try ThrowawayMail.SMTPServer(directory)
        let program = SendmailProgram(path: try ThrowawayMail.msmtpWrapper(in: directory, port: server.port))
        let outcome = program.handOff(Array("Subject: x\r\n\r\nx\r\n".utf8), from: "roster@example.org",
                                      to: "nobody@example.com")
        guard case .failed(let failure) = outcome else {
            Issue.record("handed off: \(outcome)")
            return
        }
        // msmtp says EX_DATAERR (65): any non-zero exit leaves the message queued.
        #expect(failure.reason == .exitStatus && failure.retryable)
        #expect(failure.detail == "exit status 65")
        #expect(failure.excerpt.contains("550 5.1.1 no such user here"), "\(failure.excerpt)")
        #expect(server.message(1) == nil)
    }

    @Test(.enabled(if: ThrowawayMail.available, "msmtp-mta or python3-aiosmtpd is not installed (make test-deps installs them)"))
    func anSMTPServerThatIsDownIsATemporaryFailure() throws {
        let directory = try ScratchDirectory()
        // A port just listened on and closed again: nobody is there.
        let port = try ThrowawayMail.closedPort()
        let program = SendmailProgram(path: try ThrowawayMail.msmtpWrapper(in: directory, port: port))
        let outcome = program.handOff(Array("Subject: x\r\n\r\nx\r\n".utf8), from: "roster@example.org",
                                      to: "alice@example.com")
        guard case .failed(let failure) = outcome else {
            Issue.record("handed off: \(outcome)")
            return
        }
        #expect(failure.reason == .tempfail && failure.kind == .temporary)
        #expect(failure.excerpt.contains("Connection refused"), "\(failure.excerpt)")
    }
}
