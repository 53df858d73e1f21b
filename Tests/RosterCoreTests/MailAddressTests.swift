import Testing
import RosterCore

@Suite("Mail addresses, mailboxes and the links' base")
struct MailAddressTests {
    @Test(arguments: ["alice@example.org", "a.b+tag@sub.example.co", "roster@localhost", "o'brien@x.org",
                      "x@xn--bcher-kva.example", "-oQ/tmp@example.org", "a@1.2.3.4", "{x}|~@a-b.c"])
    func wellFormedAddressesAreTakenAsWritten(raw: String) throws {
        let address = try MailAddress(parsing: raw)
        #expect(address.text == raw)
        #expect(address.domain == String(raw.split(separator: "@").last ?? ""))
    }

    static let refused: [(String, MailMessageError)] = [
        ("", .addressMalformed), ("alice", .addressMalformed), ("@x.org", .addressMalformed), ("a@", .addressMalformed),
        ("a..b@x.org", .addressMalformed), (".a@x.org", .addressMalformed), ("a.@x.org", .addressMalformed),
        ("a@-x.org", .addressMalformed), ("a@x-.org", .addressMalformed), ("a@x..org", .addressMalformed),
        ("a@x.org.", .addressMalformed), ("a@[127.0.0.1]", .addressMalformed), ("\"a b\"@x.org", .addressMalformed),
        ("a b@x.org", .addressMalformed), ("a@b@c.org", .addressMalformed), ("a@x_y.org", .addressMalformed),
        ("<a@x.org>", .addressMalformed), ("a@x.org>", .addressMalformed), ("a,b@x.org", .addressMalformed),
        ("ü@x.org", .addressNotASCII), ("a@bücher.de", .addressNotASCII), ("a@x.org\u{00A0}", .addressNotASCII),
        (String(repeating: "l", count: 65) + "@x.org", .addressTooLong),
        ("a@" + String(repeating: "d.", count: 126) + "org", .addressTooLong),
        ("a@" + String(repeating: "d", count: 64) + ".org", .addressMalformed),
        ("a@x.org\r\nBcc: victim@y.org", .addressHasControl), ("a@x.org\n", .addressHasControl),
        ("a\u{0}@x.org", .addressHasControl), ("a@x.org\u{2028}", .addressHasControl), ("a\u{85}@x.org", .addressHasControl),
        ("a\t@x.org", .addressHasControl), ("a\u{7F}@x.org", .addressHasControl), ("ü\r@x.org", .addressHasControl),
    ]

    @Test(arguments: refused)
    func malformedAddressesAreRefusedWithTheirReason(raw: String, error: MailMessageError) {
        #expect(throws: error) { try MailAddress(parsing: raw) }
    }

    @Test func theLongestAddressesAreTaken() throws {
        let local = String(repeating: "l", count: 64)
        let domain = String(repeating: String(repeating: "d", count: 61) + ".", count: 3) + "org"
        #expect(try MailAddress(parsing: local + "@" + domain).text.utf8.count == MailAddress.maxLength)
        #expect(throws: MailMessageError.addressTooLong) { try MailAddress(parsing: local + "@" + domain + "x") }
        #expect(throws: MailMessageError.addressTooLong) { try MailAddress(parsing: local + "x@example.org") }
    }

    @Test func reasonsAreStable() {
        let reasons: [(MailMessageError, String)] = [
            (.addressHasControl, "address_has_control"), (.addressNotASCII, "address_not_ascii"),
            (.addressTooLong, "address_too_long"), (.addressMalformed, "address_malformed"),
            (.textHasControl(.username), "username_has_control"),
            (.textHasControl(.displayName), "display_name_has_control"), (.mailboxMalformed, "mailbox_malformed"),
            (.codeMalformed, "code_malformed"), (.codeMinutesOutOfRange, "code_minutes_out_of_range"),
            (.baseURLMalformed, "base_url_malformed"), (.messageIDMalformed, "message_id_malformed"),
        ]
        for (error, reason) in reasons { #expect(error.reason == reason) }
    }

    static let mailboxes: [(String, String?, String)] = [
        ("roster@example.org", nil, "roster@example.org"),
        ("  roster@example.org  ", nil, "roster@example.org"),
        ("Roster <roster@example.org>", "Roster", "roster@example.org"),
        ("\"Roster, the directory\" <roster@example.org>", "Roster, the directory", "roster@example.org"),
        ("<roster@example.org>", nil, "roster@example.org"),
        ("\"\" <roster@example.org>", nil, "roster@example.org"),
        ("名册 <roster@example.org>", "名册", "roster@example.org"),
        ("\"  spaced   out \" <r@x.org>", "spaced out", "r@x.org"),
        ("\"a <b>\" <r@x.org>", "a <b>", "r@x.org"),
    ]

    @Test(arguments: mailboxes)
    func mailboxesAsTheConfigurationWritesThem(raw: String, name: String?, address: String) throws {
        let mailbox = try MailMailbox(parsing: raw)
        #expect(mailbox.displayName == name)
        #expect(mailbox.address.text == address)
        #expect(try MailMailbox(parsing: mailbox.description) == mailbox)
    }

    static let badMailboxes: [(String, MailMessageError)] = [
        ("Roster <roster@example.org", .mailboxMalformed), ("Roster <roster@example.org> x", .mailboxMalformed),
        ("a <b> <c@x.org>", .mailboxMalformed), ("\"a\\\"b\" <c@x.org>", .mailboxMalformed),
        ("a\"b <c@x.org>", .mailboxMalformed), ("Roster roster@example.org>", .addressMalformed),
        ("Roster <roster@example.org>>", .mailboxMalformed), ("Roster <>", .addressMalformed),
        ("Ro\nster <r@x.org>", .addressHasControl), ("Roster <r@x.org>\r\nBcc: v@y.org", .addressHasControl),
        ("Roster <r@x.org\r\n>", .addressHasControl), ("Roster <ü@x.org>", .addressNotASCII),
    ]

    @Test(arguments: badMailboxes)
    func malformedMailboxesAreRefused(raw: String, error: MailMessageError) {
        #expect(throws: error) { try MailMailbox(parsing: raw) }
    }

    @Test func aDisplayNameWithAControlCharacterIsRefused() throws {
        let address = try MailAddress(parsing: "a@x.org")
        for name in ["Evil\r\nBcc: v@y.org", "a\nb", "a\rb", "\u{0}", "tab\there", "\u{2029}", "\u{9B}31m"] {
            #expect(throws: MailMessageError.textHasControl(.displayName)) {
                try MailMailbox(displayName: name, address: address)
            }
        }
        #expect(try MailMailbox(displayName: "", address: address).displayName == nil)
        #expect(try MailMailbox(displayName: "مرحبا\u{202E}abc", address: address).displayName == "مرحبا\u{202E}abc")
    }

    static let bases: [(String, String)] = [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"), ("https://roster.example.org/", "https://roster.example.org"),
        ("https://x.org/roster//", "https://x.org/roster"), ("HTTPS://X.org", "HTTPS://X.org"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
    ]

    @Test(arguments: bases)
    func linksStartFromTheBaseWithoutItsTrailingSlash(raw: String, text: String) throws {
        let base = try MailBaseURL(parsing: raw)
        #expect(base.text == text)
        #expect(try MailBaseURL(parsing: base.text) == base)
    }

    @Test(arguments: ["ftp://x.org", "http://", "http:///x", "https://x.org/a b", "https://x.org/?a=1", "https://x.org/#f",
                      "javascript:alert(1)", "https://x.org\r\nBcc: v@y.org", "https://x.org/\u{0}", "https://bücher.de",
                      "https://@x.org", "https://x.org@", "//x.org", "", "https://x.org/\"><script>"])
    func aBaseThatIsNoPlainWebAddressIsRefused(raw: String) {
        #expect(throws: MailMessageError.baseURLMalformed) { try MailBaseURL(parsing: raw) }
    }

    @Test func theRecoveryLinkPercentEncodesNameAndCode() throws {
        let base = try MailBaseURL(parsing: "https://roster.example.org/")
        let code = try MailCode("004211")
        #expect(base.recoveryLink(username: "alice", code: code)
                == "https://roster.example.org/recover?user=alice&code=004211")
        #expect(base.recoveryLink(username: "张三", code: code)
                == "https://roster.example.org/recover?user=%E5%BC%A0%E4%B8%89&code=004211")
        #expect(base.recoveryLink(username: "a b&c=d+e/f?g#h%", code: code)
                == "https://roster.example.org/recover?user=a%20b%26c%3Dd%2Be%2Ff%3Fg%23h%25&code=004211")
        #expect(MailBaseURL.queryEncoded("A-z_0.9~") == "A-z_0.9~")
    }
}
