import Glibc
import RosterProtocol
import Testing

/// The password form, TOTP enrolment with its QR code, and a TOTP log-in through the log-in form, in a real
/// terminal (tmux) against the real daemon; codes come from oathtool.
@Suite("rosterctl account forms in tmux", .serialized)
struct RosterctlAccountFormTests {
    /// Enrols TOTP for a logged-in user through the script path, returning the secret.
    private func enrolTOTP(_ ctl: Rosterctl) throws -> String {
        let enrolled = try ctl.run(["--json", "account", "totp", "enroll", "--password-stdin"], input: "secret1\n")
        let secret = try #require(try JSONParser.parse(Array(enrolled.stdout.utf8))["secret"]?.stringValue)
        let code = try oathCode(secret)
        let confirmed = try ctl.run(["account", "totp", "confirm"], environment: ["ROSTER_CODE=\(code)"])
        guard confirmed.status == 0 else { throw HarnessError(description: "totp confirm failed: \(confirmed.stderr)") }
        return secret
    }

    @Test func thePasswordFormChangesThePasswordAndRefusesTheSameOne() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let pane = try ctl.startInTmux("--locale en account password")
        #expect(pane.waitFor("Change the password"))
        pane.type("secret1")
        pane.send("Tab")
        pane.type("secret1")
        #expect(eventually { pane.lineAndNext(containing: "New password")?.1.contains("✗") == true })
        pane.send("C-u")
        pane.type("secret2")
        #expect(eventually { pane.lineAndNext(containing: "New password")?.1.contains("✓") == true })
        pane.send("Tab")
        pane.type("secret2")
        #expect(eventually { pane.lineAndNext(containing: "Confirm new password")?.1.contains("✓") == true })
        #expect(pane.lineAndNext(containing: "Current password")?.0.contains("[•••••••") == true)
        #expect(eventually { !pane.screen().contains("not complete yet") })
        pane.send("Enter")
        #expect(pane.waitFor("EXIT=0"))
        #expect(pane.screen().contains("(0 other sessions were logged out)"))
        #expect(!pane.screen().contains("secret"))
        #expect(pane.waitFor("MODES=icanon echo"))
        #expect(try ctl.run(["whoami"]).stdout == "alice12\n")
        #expect(try ctl.run(["login", "--username", "alice12"], environment: ["ROSTER_PASSWORD=secret2"]).status == 0)
    }

    @Test func enrolmentOnATerminalDrawsTheQRCodeAndConfirmsWithACode() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        // Tall enough for the prompt, the code (a version 7 symbol for this URI: 27 lines), the URI and the secret.
        let pane = try ctl.startInTmux("--locale en account totp enroll", rows: 40)
        #expect(pane.waitFor("Password:"))
        pane.type("secret1")
        pane.send("Enter")
        #expect(pane.waitFor("Code from the app"))
        let lines = pane.screen().split(separator: "\n").map(String.init)
        // A symbol of 17 + 4v modules and a quiet zone of 4 each side, two module rows a line, light all round.
        let code = lines.filter { !$0.isEmpty && $0.allSatisfy { "█▀▄ ".contains($0) } }
        let width = try #require(code.first?.count)
        #expect((width - 8 - 17) % 4 == 0)
        #expect(code.allSatisfy { $0.count == width })
        #expect(code.count == (width + 1) / 2)
        #expect(code.first == String(repeating: "█", count: width))
        #expect(code.last == String(repeating: "█", count: width))
        #expect(!pane.screen().contains("secret1"))
        let secretLine = try #require(lines.first { $0.hasPrefix("Secret: ") })
        let secret = String(secretLine.dropFirst("Secret: ".count))
        #expect(lines.contains { $0.hasPrefix("otpauth://totp/Roster:alice12?secret=\(secret)") })
        pane.type(try oathCode(secret))
        pane.send("Enter")
        #expect(pane.waitFor("EXIT=0"))
        #expect(pane.screen().contains("two-step log-in is on"))
        #expect(try ctl.run(["--json", "account", "show"]).stdout.contains("\"totp\":true"))
    }

    @Test func theLogInFormAsksForTheCodeAfterTheRightPassword() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let secret = try enrolTOTP(ctl)
        #expect(try ctl.run(["logout"]).status == 0)
        let pane = try ctl.startInTmux("--locale en login")
        #expect(pane.waitFor("Username or email"))
        pane.type("alice12")
        pane.send("Down")
        pane.type("secret1")
        #expect(eventually { !pane.screen().contains("not complete yet") })
        pane.send("Enter")
        #expect(pane.waitFor("enter the 6-digit code"))
        #expect(pane.lineAndNext(containing: "One-time code")?.0.contains("› One-time code") == true)
        // The confirming step is used up; the next one is in the window.
        pane.type(try oathCode(secret, offsetSteps: 1))
        #expect(eventually { !pane.screen().contains("not complete yet") })
        pane.send("Enter")
        #expect(pane.waitFor("EXIT=0"))
        #expect(pane.screen().contains("alice12"))
        #expect(try ctl.run(["whoami"]).stdout == "alice12\n")
    }
}
