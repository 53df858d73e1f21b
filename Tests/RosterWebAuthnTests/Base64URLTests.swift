import RosterCrypto
import Testing
@testable import RosterWebAuthn

/// Base64url as WebAuthn's JSON carries it: unpadded, URL alphabet, nothing else.
@Suite struct Base64URLTests {
    @Test func roundTripsEveryLength() throws {
        var bytes: [UInt8] = []
        for n in 0..<70 {
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes, "\(n)")
            bytes.append(UInt8(truncatingIfNeeded: n &* 37 &+ 250))
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }

    @Test func refusesWhatIsNotStrictUnpaddedBase64url() {
        for text in ["AA==", "A", "+/8", "-_8 ", " -_8", "-_8\n", "-_9", "é"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
        #expect(Base64URL.decode(Base64URL.encode([UInt8](repeating: 1, count: 40)), limit: 39) == nil)
    }
}

/// The size check that stands before libcbor, which allocates what a header declares.
@Suite struct CBORBoundsTests {
    @Test func wellBoundedItemsPass() {
        for bytes: [UInt8] in [[0x00], [0x18, 0xFF], [0x43, 1, 2, 3], [0x82, 0x01, 0x02], [0xA1, 0x61, 0x61, 0x01],
                               [0x9F, 0x01, 0xFF], [0x5F, 0x41, 0x01, 0xFF], [0xC0, 0x01], [0xF5], [0xA0]] {
            #expect(CBORBounds.isOneItem(bytes[...]), "\(bytes)")
        }
        #expect(CBORBounds.areItems([0x01, 0x02, 0xA0][...]))
        #expect(CBORBounds.areItems([][...]))
    }

    @Test func aCountOrLengthBeyondTheInputIsRefusedBeforeAnyAllocation() {
        for bytes: [UInt8] in [[0x9A, 0x61, 0x6C, 0x67, 0x26], [0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
                               [0xBA, 0, 1, 0, 0, 0x01], [0x5A, 0, 0, 1, 0], [0x82, 0x01], [0x1C], [0xFF], [0x9F, 0x01],
                               [0x5F, 0x61, 0x61, 0xFF], [0x18]] {
            #expect(!CBORBounds.isOneItem(bytes[...]), "\(bytes)")
        }
        #expect(!CBORBounds.isOneItem([0x01, 0x02][...]))
        let deep = [UInt8](repeating: 0x81, count: 40) + [0x00]
        #expect(!CBORBounds.isOneItem(deep[...]))
    }
}
