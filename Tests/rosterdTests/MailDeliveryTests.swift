import Foundation
import Glibc
import RosterMailTesting
import RosterProtocol
import Testing

/// protocol.md §Email against the real rosterd and a real mail system (msmtp to a throwaway SMTP server): a mail
/// the daemon acknowledged survives kill -9 on either side of the hand-off, and daemons sharing PostgreSQL send
/// each queued mail once. The retry schedule is the daemon's own (1 minute, a 90 s claim), so each test waits for
/// it in real time; the tests run beside the rest of the suite.
@Suite("Mail through the real daemon and msmtp", .enabled(if: ThrowawayMail.available))
struct MailDeliveryTests {
    /// The first try of the mail ever queued waits this long after it failed; a claim lapses after 90 s.
    static let retryWaitMs = 150_000

    /// A mail system, and a sendmail in front of it that fails (75, EX_TEMPFAIL) while the file `down` exists, and
    /// once after handing a mail off kills its caller (the daemon) with SIGKILL while `kill-after` exists.
    final class GatedMail {
        let scratch: ScratchDirectory
        let smtp: ThrowawayMail.SMTPServer
        let sendmail: String

        init(down: Bool = false, killAfterHandOff: Bool = false) throws {
            scratch = try ScratchDirectory()
            smtp = try ThrowawayMail.SMTPServer(try ScratchDirectory())
            let relay = try ThrowawayMail.msmtpWrapper(in: scratch, port: smtp.port)
            if down { try scratch.write(scratch.file("down"), "") }
            if killAfterHandOff { try scratch.write(scratch.file("kill-after"), "") }
            sendmail = try scratch.script("sendmail-gated", """
                if [ -e '\(scratch.file("down"))' ]; then echo tempfail >> '\(scratch.file("tries"))'; exit 75; fi
                '\(relay)' "$@" || exit $?
                echo sent >> '\(scratch.file("tries"))'
                if [ -e '\(scratch.file("kill-after"))' ]; then rm -f '\(scratch.file("kill-after"))'; kill -9 $PPID; fi
                exit 0
                """)
        }

        var config: String { "[Mail]\nSendmail=\(sendmail)\nFrom=roster@example.org\n" }

        /// The sendmail's tries so far, `tempfail` or `sent`.
        var tries: [String] { scratch.lines("tries") ?? [] }

        func bringUp() { unlink(scratch.file("down")) }

        /// Every message received so far, in order.
        var received: [String] {
            var messages: [String] = []
            while let next = smtp.message(messages.count + 1) { messages.append(next) }
            return messages
        }
    }

    static func config(_ mail: GatedMail) -> String {
        "[Hashing]\nMemoryKiB=8192\nIterations=1\n" + mail.config
    }

    /// A header's value; the message's CRLF is one Character to Swift, so it is made LF first.
    static func header(_ name: String, of message: String) -> String? {
        message.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n").first { $0.hasPrefix(name + ": ") }
            .map { String($0.dropFirst(name.count + 2)).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The outbox as `admin.mail.list` shows it: each mail's status.
    static func statuses(on daemon: TestDaemon) throws -> [String] {
        let listed = try daemon.connect().call("admin.mail.list", ["limit": 1000])
        return listed["result"]?["items"]?.arrayValue?.compactMap { $0["status"]?.stringValue } ?? []
    }

    @Test func aMailQueuedBeforeTheDaemonWasKilledIsSentOnceAfterItsRestartAndItsCodeWorks() throws {
        let mail = try GatedMail(down: true)
        let first = try TestDaemon(config: Self.config(mail))
        let client = try first.connect()
        let registered = try client.call("users.register", ["username": "killed1", "password": "secret1",
                                                            "email": "killed1@example.org"])
        #expect(registered["result"]?["username"] == "killed1", "\(registered)")
        #expect(eventually { mail.tries == ["tempfail"] }, "the first hand-off failed: \(mail.tries)")
        first.signal(SIGKILL)
        #expect(first.waitForExit() != nil)
        mail.bringUp()

        let second = try TestDaemon(directory: first.directory, config: Self.config(mail))
        #expect(eventually(timeoutMs: Self.retryWaitMs) { (try? Self.statuses(on: second)) == ["sent"] },
                "\(second.stderr)")
        let received = mail.received
        #expect(received.count == 1, "exactly once: \(received.count) received")
        let message = try #require(received.first)
        #expect(message.contains("RCPT TO:killed1@example.org"))
        #expect(mail.tries == ["tempfail", "sent"])
        // The code was sealed in the outbox across the crash and is still the account's.
        let body = try Self.body(of: message)
        let code = try #require(body.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 }, "\(body)")
        let account = try second.connect()
        try account.logIn("killed1")
        let verified = try account.call("account.email_verify", ["code": .string(String(code))])
        #expect(verified["result"]?["email_verified"] == true, "\(verified)")
    }

    @Test func aDaemonKilledAfterTheHandOffSendsTheSameMailAgainAfterItsClaimLapses() throws {
        let mail = try GatedMail(killAfterHandOff: true)
        let first = try TestDaemon(config: Self.config(mail))
        let registered = try first.connect().call("users.register", ["username": "killed2", "password": "secret1",
                                                                     "email": "killed2@example.org"])
        #expect(registered["result"]?["username"] == "killed2", "\(registered)")
        #expect(first.waitForExit() != nil, "the sendmail killed the daemon after handing the mail off")
        #expect(mail.received.count == 1)

        let second = try TestDaemon(directory: first.directory, config: Self.config(mail))
        #expect(eventually(timeoutMs: Self.retryWaitMs) { (try? Self.statuses(on: second)) == ["sent"] },
                "\(second.stderr)")
        let received = mail.received
        #expect(received.count == 2, "at least once, here twice: \(received.count) received")
        let ids = received.compactMap { Self.header("Message-ID", of: $0) }
        #expect(ids.count == 2 && Set(ids).count == 1, "the copy is the same mail: \(ids)")
        let dates = received.compactMap { Self.header("Date", of: $0) }
        #expect(dates.count == 2 && Set(dates).count == 1, "\(dates)")
    }

    /// A hundred accounts each get a notice (new recovery codes: notices are not limited), the first ten their
    /// verification code too (ten a minute per requester), 110 or more, all while the mail system is down; then two other
    /// daemons on the same database send them, each once.
    @Test func twoDaemonsOnOnePostgreSQLSendEachOfOverAHundredQueuedMailsOnce() throws {
        let mail = try GatedMail(down: true)
        let shared = try SharedDatabase(extra: mail.config)
        let filler = try shared.daemon()
        for index in 0..<100 {
            let name = "queued\(index + 100)"
            let client = try filler.connect()
            let answer = try client.call("users.register", ["username": .string(name), "password": "secret1",
                                                            "email": .string("\(name)@example.org")])
            #expect(answer["result"]?["username"] == .string(name), "\(answer)")
            try client.logIn(name)
            let codes = try client.call("account.recovery_codes", ["password": "secret1"])
            #expect(codes["result"]?["codes"]?.arrayValue?.count == 10, "\(codes)")
        }
        // Ten verification mails a minute from this one requester: more if the loop took longer than a minute.
        let queued = try Self.statuses(on: filler).count
        #expect(queued >= 110)
        #expect(eventually(timeoutMs: 60_000) { mail.tries.count == queued }, "every first try failed: \(mail.tries.count)")
        filler.signal(SIGTERM)
        #expect(filler.waitForExit() != nil)
        mail.bringUp()

        let (a, b) = try shared.pair()
        #expect(eventually(timeoutMs: Self.retryWaitMs) {
            ((try? Self.statuses(on: a)) ?? []).filter { $0 == "sent" }.count == queued
        }, "\(a.stderr)\n\(b.stderr)")
        let received = mail.received
        #expect(received.count == queued, "each once: \(received.count) received")
        #expect(Set(received.compactMap { Self.header("Message-ID", of: $0) }).count == queued)
        let sentBy = [a, b].map { $0.stderr.components(separatedBy: "roster_event=mail_sent").count - 1 }
        #expect(sentBy.reduce(0, +) == queued, "handed off by A and B: \(sentBy)")
    }

    /// The decoded body of a received message (the envelope lines, then the message with CRLF line ends).
    static func body(of received: String) throws -> String {
        let message = received.replacingOccurrences(of: "\r\n", with: "\n")
        let parts = message.components(separatedBy: "\n\n")
        try #require(parts.count >= 3, "envelope, headers, body")
        let body = parts.dropFirst(2).joined(separator: "\n\n")
        guard header("Content-Transfer-Encoding", of: message) == "base64" else { return body }
        let decoded = try #require(Data(base64Encoded: body.filter { !$0.isWhitespace }))
        return String(decoding: decoded, as: UTF8.self)
    }
}
