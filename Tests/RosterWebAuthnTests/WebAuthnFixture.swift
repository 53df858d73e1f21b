import Foundation
import RosterCrypto
import RosterProtocol
import RosterTestSupport
import Testing
@testable import RosterWebAuthn

/// One recorded ceremony pair (Fixtures/*.json): a registration and an assertion of the same credential, with
/// the challenges they answered and the relying party they were made for.
struct WebAuthnFixture {
    let name: String
    let relyingParty: RelyingParty
    let registrationChallenge: [UInt8]
    let registration: JSONValue
    let assertionChallenge: [UInt8]
    let assertion: JSONValue

    static let names = ["chromium-es256", "chromium-es256-up-only", "chromium-eddsa", "soft-eddsa", "soft-es256-packed"]

    init(_ name: String) throws {
        self.name = name
        let tree = SourceTree()
        let text = try #require(tree.text(of: "Tests/RosterWebAuthnTests/Fixtures/\(name).json"), "\(name)")
        let json = try JSONParser.parse(Array(text.utf8))
        let rpID = try #require(json["rp_id"]?.stringValue)
        let origin = try #require(json["origin"]?.stringValue)
        relyingParty = RelyingParty(id: rpID, name: "Roster", origins: [origin])
        registrationChallenge = try #require(Base64URL.decode(json["registration"]?["challenge"]?.stringValue ?? "="))
        registration = try #require(json["registration"]?["credential"])
        assertionChallenge = try #require(Base64URL.decode(json["assertion"]?["challenge"]?.stringValue ?? "="))
        assertion = try #require(json["assertion"]?["credential"])
    }

    func registrationResponse() throws -> RegistrationResponse { try RegistrationResponse(json: registration) }
    func assertionResponse() throws -> AssertionResponse { try AssertionResponse(json: assertion) }

    func verifiedRegistration() throws -> VerifiedRegistration {
        try RegistrationVerifier.verify(try registrationResponse(), challenge: registrationChallenge,
                                        relyingParty: relyingParty)
    }
}

extension Array where Element == UInt8 {
    /// The index right after the first occurrence of `needle`.
    func index(after needle: [UInt8]) -> Int? {
        guard needle.count <= count else { return nil }
        for start in 0...(count - needle.count) where self[start..<(start + needle.count)].elementsEqual(needle) {
            return start + needle.count
        }
        return nil
    }

    /// The bytes with `body` applied to the byte at `index`.
    func changing(at index: Int, _ body: (UInt8) -> UInt8) -> [UInt8] {
        var copy = self
        copy[index] = body(copy[index])
        return copy
    }

    /// The text as UTF-8 with `target` replaced by `replacement` (clientDataJSON edits).
    func replacingText(_ target: String, with replacement: String) -> [UInt8] {
        Array(String(decoding: self, as: UTF8.self).replacingOccurrences(of: target, with: replacement).utf8)
    }
}
