import RosterCrypto
import RosterProtocol

/// The ceremony a clientDataJSON says it was made for.
public enum Ceremony: String, Sendable {
    case create = "webauthn.create"
    case get = "webauthn.get"
}

/// What the browser signed over besides the authenticator data (WebAuthn §5.8.1), checked against what this
/// relying party asked for.
struct ClientData: Equatable {
    var type: String
    var challenge: [UInt8]
    var origin: String
    var crossOrigin: Bool

    /// Most browsers send well under 512 bytes; the bound keeps a hostile client's JSON small.
    static let maximumBytes = 4096

    /// Reads the bytes as clientDataJSON; `.format` when they are not a JSON object with string type, challenge
    /// and origin.
    init(json bytes: [UInt8]) throws(PasskeyRejection) {
        guard bytes.count <= Self.maximumBytes, let value = try? JSONParser.parse(bytes),
              let type = value["type"]?.stringValue, let encoded = value["challenge"]?.stringValue,
              let origin = value["origin"]?.stringValue
        else { throw .format }
        // A challenge that is not base64url cannot be ours: that is the challenge's failure, not the shape's.
        self.type = type
        challenge = Base64URL.decode(encoded, limit: 1024) ?? []
        self.origin = origin
        crossOrigin = value["crossOrigin"]?.boolValue ?? false
    }

    /// The checks of WebAuthn §7.1 steps 7–9 (§7.2 steps 11–13), in that order.
    func check(ceremony: Ceremony, challenge expected: [UInt8], relyingParty: RelyingParty) throws(PasskeyRejection) {
        guard type == ceremony.rawValue else { throw .type }
        guard !expected.isEmpty, challenge == expected else { throw .challenge }
        guard !crossOrigin, relyingParty.origins.contains(origin) else { throw .origin }
    }
}
