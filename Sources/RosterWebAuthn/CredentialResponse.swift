import RosterCrypto
import RosterProtocol

/// A `credential` param that is not in the shape of the WebAuthn JSON: which member is missing or of the wrong
/// type (`invalid_params`, not a rejection: nothing was verified yet).
public struct CredentialShapeError: Error, Equatable, Sendable {
    /// The member's path, e.g. `response.clientDataJSON`.
    public let member: String
}

/// A `RegistrationResponseJSON` (WebAuthn §5.1), its binary members decoded.
public struct RegistrationResponse: Equatable, Sendable {
    public var rawID: [UInt8]
    public var clientDataJSON: [UInt8]
    public var attestationObject: [UInt8]
    /// `response.transports` as the browser gave them, unknown ones included (at most 8, each short).
    public var transports: [String]

    public init(rawID: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8], transports: [String] = []) {
        self.rawID = rawID
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
    }

    public init(json: JSONValue) throws(CredentialShapeError) {
        let shell = try CredentialShell(json: json)
        rawID = shell.rawID
        clientDataJSON = try shell.binary("clientDataJSON")
        attestationObject = try shell.binary("attestationObject", limit: 16 * 1024)
        transports = try shell.transports()
    }
}

/// An `AuthenticationResponseJSON` (WebAuthn §5.1), its binary members decoded.
public struct AssertionResponse: Equatable, Sendable {
    public var rawID: [UInt8]
    public var clientDataJSON: [UInt8]
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    /// The user handle a discoverable credential answers with; nil when the authenticator gave none.
    public var userHandle: [UInt8]?

    public init(rawID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8],
                userHandle: [UInt8]?) {
        self.rawID = rawID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }

    public init(json: JSONValue) throws(CredentialShapeError) {
        let shell = try CredentialShell(json: json)
        rawID = shell.rawID
        clientDataJSON = try shell.binary("clientDataJSON")
        authenticatorData = try shell.binary("authenticatorData", limit: 4096)
        signature = try shell.binary("signature", limit: 1024)
        userHandle = try shell.optionalBinary("userHandle", limit: 64).flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// The members both responses share: `id`, `rawId`, `type` and the `response` object.
private struct CredentialShell {
    let rawID: [UInt8]
    let response: JSONValue

    /// WebAuthn caps a credential id at 1023 bytes.
    static let maximumIDBytes = 1023

    init(json: JSONValue) throws(CredentialShapeError) {
        guard json.objectMembers != nil else { throw CredentialShapeError(member: "credential") }
        guard let id = json["id"]?.stringValue else { throw CredentialShapeError(member: "id") }
        guard let raw = json["rawId"]?.stringValue else { throw CredentialShapeError(member: "rawId") }
        guard let type = json["type"]?.stringValue else { throw CredentialShapeError(member: "type") }
        guard let response = json["response"], response.objectMembers != nil
        else { throw CredentialShapeError(member: "response") }
        guard type == "public-key" else { throw CredentialShapeError(member: "type") }
        guard id == raw, let bytes = Base64URL.decode(raw, limit: Self.maximumIDBytes), !bytes.isEmpty
        else { throw CredentialShapeError(member: "rawId") }
        rawID = bytes
        self.response = response
    }

    func binary(_ name: String, limit: Int = 4096) throws(CredentialShapeError) -> [UInt8] {
        guard let bytes = try optionalBinary(name, limit: limit) else {
            throw CredentialShapeError(member: "response.\(name)")
        }
        return bytes
    }

    func optionalBinary(_ name: String, limit: Int) throws(CredentialShapeError) -> [UInt8]? {
        guard let value = response[name], value != .null else { return nil }
        guard let text = value.stringValue, let bytes = Base64URL.decode(text, limit: limit) else {
            throw CredentialShapeError(member: "response.\(name)")
        }
        return bytes
    }

    func transports() throws(CredentialShapeError) -> [String] {
        guard let value = response["transports"], value != .null else { return [] }
        guard let items = value.arrayValue, items.count <= 8 else {
            throw CredentialShapeError(member: "response.transports")
        }
        var names: [String] = []
        for item in items {
            guard let name = item.stringValue, !name.isEmpty, name.utf8.count <= 32,
                  name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || $0 == 0x2D })
            else { throw CredentialShapeError(member: "response.transports") }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }
}
