// The `webauthn` fuzz target: a passkey response as the relying party reads it, from raw bytes to a verdict.
//
// The first byte picks what the rest is, so each reader is reached without first passing checks a fuzzer
// cannot guess (a challenge, a signature):
//   0  [u16 clientDataJSON length][clientDataJSON][attestationObject]: a registration
//   1  [alg: 0 ES256, else EdDSA][raw key][u16 length][clientDataJSON][u16 length][authenticatorData][signature]:
//      an assertion
//   2  a credential's JSON, read as both a registration and an assertion response, and the text as a stored
//      passkey's transports (which must write back as the same list)
// The challenge expected is the one the clientDataJSON names, so the checks after it run too.

import RosterCrypto
import RosterProtocol
import RosterStorage
import RosterWebAuthn

/// The properties the WebAuthn verifier promises, checked on one fuzzer input.
enum WebAuthnTarget {
    static let relyingParty = RelyingParty(id: "localhost", name: "Roster", origins: ["http://localhost:8080"])

    static func run(_ bytes: [UInt8]) -> [String] {
        guard let mode = bytes.first else { return [] }
        var reader = ByteReader(bytes.dropFirst())
        switch mode % 3 {
        case 0:
            guard let clientData = reader.prefixed() else { return [] }
            let response = RegistrationResponse(rawID: [1], clientDataJSON: clientData,
                                                attestationObject: reader.rest())
            return registration(response)
        case 1:
            let algorithm: PasskeyPublicKey.Algorithm = reader.byte() == 0 ? .es256 : .eddsa
            let key = reader.take(algorithm == .es256 ? 64 : 32)
            guard let clientData = reader.prefixed(), let data = reader.prefixed() else { return [] }
            let response = AssertionResponse(rawID: [1], clientDataJSON: clientData, authenticatorData: data,
                                             signature: reader.rest(), userHandle: nil)
            return assertion(response, key: PasskeyPublicKey(algorithm: algorithm, raw: key))
        default:
            var broken: [String] = []
            let text = String(decoding: reader.rest(), as: UTF8.self)
            // Another spelling of the same list may be read (`\u0041` for `A`); what it reads must write back as a
            // text that reads as the same list.
            if let transports = PasskeyTransports.decoded(text),
               PasskeyTransports.decoded(PasskeyTransports.encoded(transports)) != transports {
                broken.append("webauthn: stored transports read back as another list")
            }
            guard let json = try? JSONParser.parse(Array(reader.rest())) else { return broken }
            if let response = try? RegistrationResponse(json: json) {
                if response.rawID.isEmpty || response.rawID.count > 1023 {
                    broken.append("webauthn: a credential id outside 1...1023 bytes was read")
                }
                broken += registration(response)
            }
            if let response = try? AssertionResponse(json: json), response.userHandle?.isEmpty == true {
                broken.append("webauthn: an empty user handle was read as one")
            }
            return broken
        }
    }

    /// The challenge the client data names, so that a fuzzed response gets past the challenge check.
    private static func challenge(in clientData: [UInt8]) -> [UInt8] {
        guard let json = try? JSONParser.parse(clientData), let text = json["challenge"]?.stringValue else { return [] }
        return Base64URL.decode(text) ?? []
    }

    private static func registration(_ response: RegistrationResponse) -> [String] {
        let expected = challenge(in: response.clientDataJSON)
        let first = Result { () throws(PasskeyRejection) in
            try RegistrationVerifier.verify(response, challenge: expected, relyingParty: relyingParty)
        }
        var broken: [String] = []
        if case .success(let verified) = first {
            if verified.publicKey.raw.count != (verified.publicKey.algorithm == .es256 ? 64 : 32) {
                broken.append("webauthn: a registration's key is not its algorithm's length")
            }
            if !verified.flags.contains(.userPresent) { broken.append("webauthn: a registration without UP passed") }
            if verified.credentialID != response.rawID { broken.append("webauthn: a key for another credential id") }
        }
        let again = Result { () throws(PasskeyRejection) in
            try RegistrationVerifier.verify(response, challenge: expected, relyingParty: relyingParty)
        }
        if again != first { broken.append("webauthn: the same registration judged twice differently") }
        return broken
    }

    private static func assertion(_ response: AssertionResponse, key: PasskeyPublicKey) -> [String] {
        let expected = challenge(in: response.clientDataJSON)
        let verdict = Result { () throws(PasskeyRejection) in
            try AssertionVerifier.verify(response, challenge: expected, relyingParty: relyingParty, key: key)
        }
        if case .success(let verified) = verdict, !verified.flags.contains(.userPresent) {
            return ["webauthn: an assertion without UP passed"]
        }
        return []
    }
}

/// Reads a fuzzer's bytes front to back; what runs short answers what there is.
private struct ByteReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    mutating func byte() -> UInt8? { bytes.popFirst() }

    mutating func take(_ count: Int) -> [UInt8] {
        let taken = Array(bytes.prefix(count))
        bytes = bytes.dropFirst(count)
        return taken
    }

    /// A big-endian u16 length and that many bytes; nil when the length runs past the end.
    mutating func prefixed() -> [UInt8]? {
        let head = take(2)
        guard head.count == 2 else { return nil }
        let count = Int(head[0]) << 8 | Int(head[1])
        guard count <= bytes.count else { return nil }
        return take(count)
    }

    func rest() -> [UInt8] { Array(bytes) }
}
