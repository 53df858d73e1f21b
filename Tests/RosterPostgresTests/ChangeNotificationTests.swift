@testable import RosterPostgres
import RosterStorage
import Testing

/// The payload one daemon sends the others: every change reads back as it was written, whatever its text holds,
/// and what is not this version's format is refused, never guessed at.
@Suite("Change notifications")
struct ChangeNotificationTests {
    private static let changes: [StorageChange] = [
        .accountCreated(username: "alice1", email: "Alice@Example.com"),
        .accountCreated(username: "bob123", email: nil),
        // Spaces, percent signs, controls and non-ASCII must not split or bend a field.
        .accountCreated(username: "zoë 100%", email: "a\tb\n@x"),
        .accountDeleted(id: 42, username: "carol1", email: nil),
        .accountDeleted(id: 7, username: "dave%20", email: "dave@example.com"),
        .tokenRevoked(hash: (0..<32).map { UInt8($0 * 8) }),
        .sessionsEnded(account: 9_000_000_000),
        .contactsChanged(account: 3),
        .emailChanged(account: 5, username: "erin01", email: "new@example.com", previous: "old@example.com"),
        .emailChanged(account: 5, username: "erin01", email: nil, previous: "100%@example.com"),
        .emailChanged(account: 5, username: "zoë 100%", email: "张三@例子.com", previous: nil),
        // The longest a username and an email can be, in four-byte characters: still far under the limit.
        .emailChanged(account: 9_000_000_000, username: String(repeating: "😀", count: 64),
                      email: String(repeating: "😀", count: 254), previous: String(repeating: "😀", count: 254)),
    ]

    @Test(arguments: changes)
    func everyChangeReadsBackAsItWasWritten(_ change: StorageChange) throws {
        let sent = ChangeNotification(origin: "0123456789abcdef", change: change)
        let payload = try #require(sent.payload)
        #expect(payload.hasPrefix("1 0123456789abcdef "))
        #expect(!payload.contains("\n") && !payload.contains("\t"))
        #expect(payload.utf8.count < 8_000)
        #expect(try ChangeNotification.parse(payload) == sent)
    }

    /// A statement revoking many tokens binds the prefix and appends each hash's lower-case hex (issue 15).
    @Test func theTokenRevokedPrefixAndAHashesHexAreItsPayload() throws {
        let hash = (0..<32).map { UInt8(255 - $0) }
        let payload = ChangeNotification.tokenRevokedPrefix(origin: "ab12") + Hex.encode(hash)
        #expect(payload == ChangeNotification(origin: "ab12", change: .tokenRevoked(hash: hash)).payload)
        #expect(try ChangeNotification.parse(payload).change == .tokenRevoked(hash: hash))
    }

    /// The email change's statement binds the prefix and appends the username, the new and the old address as
    /// hex of their UTF-8, as PostgreSQL's `encode(convert_to(x, 'UTF8'), 'hex')` writes it (empty for none).
    @Test func theEmailChangedPrefixAndThreeHexFieldsAreItsPayload() throws {
        let fields = ["erin01", "new@example.com", ""].map { Hex.encode(Array($0.utf8)) }
        let payload = ChangeNotification.emailChangedPrefix(origin: "ab12", account: 5) + " " + fields.joined(separator: " ")
        let change = StorageChange.emailChanged(account: 5, username: "erin01", email: "new@example.com", previous: nil)
        #expect(payload == ChangeNotification(origin: "ab12", change: change).payload)
        #expect(try ChangeNotification.parse(payload).change == change)
        for malformed in ["1 ab email-changed 5 6572696e3031 ", "1 ab email-changed 5  6e 6f", "1 ab email-changed x 65 6e 6f",
                          "1 ab email-changed 5 65 6e 6", "1 ab email-changed 5 65 zz 6f", "1 ab email-changed 5 65 ff 6f",
                          "1 ab email-changed 5 65 6e 6f 70"] {
            #expect(throws: ChangeNotification.ParseFailure.malformed, "\(malformed)") { try ChangeNotification.parse(malformed) }
        }
    }

    @Test func aResyncIsNeverSent() {
        #expect(ChangeNotification(origin: "a", change: .resync).payload == nil)
    }

    @Test func aPayloadOfAnotherFormatIsRefusedAsSuch() {
        #expect(throws: ChangeNotification.ParseFailure.unknownVersion) { try ChangeNotification.parse("2 abc account-created x ") }
        #expect(throws: ChangeNotification.ParseFailure.unknownVersion) { try ChangeNotification.parse("") }
        #expect(throws: ChangeNotification.ParseFailure.unknownKind("account-locked")) {
            try ChangeNotification.parse("1 abc account-locked 5")
        }
        for malformed in ["1", "1  contacts-changed 3", "1 abc", "1 abc contacts-changed", "1 abc contacts-changed x",
                          "1 abc contacts-changed 3 4", "1 abc account-created  ", "1 abc account-created a%2",
                          "1 abc account-created a%zz ", "1 abc token-revoked abc", "1 abc token-revoked XY",
                          "1 abc account-deleted x alice ", "1 abc account-created a%ff "] {
            #expect(throws: ChangeNotification.ParseFailure.malformed, "\(malformed)") { try ChangeNotification.parse(malformed) }
        }
    }
}

extension StorageChange: CustomTestStringConvertible {
    public var testDescription: String { "\(self)" }
}
