import RosterCore
import RosterRuntime
import Testing
@testable import RosterServer

/// The mail program's words as the journal may keep them: the recipient's address and local part blanked out.
@Suite("Mail log text")
struct MailLogTextTests {
    func blanked(_ text: String, _ address: String = "alice.smith@example.com") throws -> String {
        MailLogText.withoutRecipient(text, try MailAddress(parsing: address))
    }

    @Test func theAddressAndItsLocalPartAreBlankedWhereverTheyStandAlone() throws {
        #expect(try blanked("alice.smith@example.com: unknown") == "…@example.com: unknown")
        #expect(try blanked("<ALICE.SMITH@EXAMPLE.COM> 550") == "<…@example.com> 550")
        #expect(try blanked("user alice.smith unknown, Alice.Smith!") == "user … unknown, …!")
        #expect(try blanked("msmtp: cannot connect to 127.0.0.1") == "msmtp: cannot connect to 127.0.0.1")
    }

    /// Only a word of its own: inside a longer word, or as a domain, it stays, so the domain and other names
    /// survive; punctuation against it (which an address may hold) shields nothing.
    @Test func aMatchInsideALongerWordOrADomainStays() throws {
        #expect(try blanked("bob.alice.smith@example.com, alice.smithy, xalice.smith", "alice.smith@example.com")
                == "bob.…@example.com, alice.smithy, xalice.smith")
        #expect(try blanked("example@example.org said example", "example@example.org") == "…@example.org said …")
        #expect(try blanked("", "a@b.example") == "")
    }

    @Test func anOutcomeKeepsAllButItsExcerpt() throws {
        let address = try MailAddress(parsing: "alice@example.com")
        #expect(MailLogText.withoutRecipient(.handedOff, address) == .handedOff)
        let failure = SendmailFailure(reason: .exitStatus, detail: "exit status 65", excerpt: "alice@example.com: 550")
        #expect(MailLogText.withoutRecipient(.failed(failure), address)
                == .failed(SendmailFailure(reason: .exitStatus, detail: "exit status 65", excerpt: "…@example.com: 550")))
    }
}
