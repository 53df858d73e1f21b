import Foundation
import Testing
@testable import RosterCore

/// The ASCII fast paths of issue 8 must give exactly what the general Unicode path gives; the general path is
/// restated here as the model, and random ASCII names (controls, "\r\n", spaces, forbidden characters,
/// upper case, every length around the limits) are judged by both.
@Suite("Username fast paths")
struct UsernameFastPathTests {
    private static func modelCanonical(_ raw: String) -> String {
        // For ASCII the width mapping changes nothing, so the model is lower-casing then NFC.
        raw.lowercased().precomposedStringWithCanonicalMapping
    }

    private static func modelRules(_ raw: String, policy: Policy) -> RuleOutcome {
        let canonical = modelCanonical(raw)
        if canonical.isEmpty { return .settled(.empty) }
        // The maximum counts code points and the minimum characters ("\r\n" is one character, two code points).
        if canonical.unicodeScalars.count > policy.usernameMaxLength { return .settled(.invalid(.tooLong)) }
        if canonical.count < policy.usernameMinLength { return .settled(.invalid(.tooShort)) }
        let forbidden = canonical.contains { character in
            policy.usernameForbiddenCharacters.contains(character) || character.isWhitespace
                || character.unicodeScalars.contains { scalar in
                    switch scalar.properties.generalCategory {
                    case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator,
                         .surrogate, .privateUse, .unassigned: true
                    default: false
                    }
                }
        }
        return forbidden ? .settled(.invalid(.forbiddenCharacters)) : .needsCheck
    }

    @Test func asciiNamesAgreeWithTheModel() {
        var state: UInt64 = 0x5EED
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let alphabet: [Character] = Array("abcXYZ019_-.!@#$%^&*() ~") + ["\r\n", "\t", "\u{7}", "\u{7F}", "\u{0}", "\r", "\n"]
        for policy in [Policy.seed, Policy.hardened] {
            for _ in 0..<5_000 {
                let length = random(70)
                let name = String((0..<length).map { _ in alphabet[random(alphabet.count)] })
                #expect(Normalization.canonicalUsername(name) == Self.modelCanonical(name), "\(name.debugDescription)")
                #expect(UsernameRules.validate(name, policy: policy) == Self.modelRules(name, policy: policy),
                        "\(name.debugDescription)")
            }
        }
    }

    @Test func namesThatCountDifferentlyInBytesAndCharacters() {
        // "\r\n" is one character and two bytes: length is judged in characters, before forbidden characters.
        #expect(UsernameRules.validate("abcd\r\n", policy: .seed) == .settled(.invalid(.tooShort)))
        #expect(UsernameRules.validate("abcde\r\n", policy: .seed) == .settled(.invalid(.forbiddenCharacters)))
        #expect(UsernameRules.validate("ALICE1", policy: .seed) == .needsCheck)
        #expect(Normalization.canonicalUsername("ALICE1") == "alice1")
    }
}
