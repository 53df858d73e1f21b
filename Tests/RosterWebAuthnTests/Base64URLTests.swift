import RosterCrypto
import Testing

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
