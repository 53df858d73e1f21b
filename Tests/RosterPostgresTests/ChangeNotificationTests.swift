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
