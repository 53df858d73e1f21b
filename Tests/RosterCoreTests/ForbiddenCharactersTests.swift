import Testing
@testable import RosterCore

@Suite("Forbidden characters")
struct ForbiddenCharactersTests {
    @Test(arguments: ["!@#$%^&*()", "", " ~\u{7F}", "aZ09<>;=é中"])
    func theBitmapAgreesWithTheSetForEveryByte(_ text: String) {
        let forbidden = ForbiddenCharacters(text)
        for byte in UInt8(0)...UInt8(255) {
            let inSet = byte < 0x80 && forbidden.contains(Character(Unicode.Scalar(byte)))
            #expect(forbidden.contains(asciiByte: byte) == inSet, "byte \(byte) in \(text.debugDescription)")
        }
    }
}
