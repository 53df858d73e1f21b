/// The `[WebAuthn]` settings: the relying party rosterd is for passkeys. A reload applies them to the next
/// ceremony begun; one begun before it finishes under the settings it began with.
public struct WebAuthnSettings: Equatable, Sendable {
    /// The RP ID passkeys are bound to: a domain, lowercase, without scheme or port (default `localhost`).
    public var rpID: String
    /// The name an authenticator shows (default `Roster`).
    public var rpName: String
    /// The origins a browser may run a ceremony from, each `http(s)://host[:port]` with the RP ID as its host or
    /// a parent of it.
    public var origins: [String]

    public static let defaultOrigins = ["http://localhost:8080", "http://127.0.0.1:8080"]
    /// `RPName=`'s length in characters.
    public static let rpNameMaxLength = 64

    public init(rpID: String = "localhost", rpName: String = "Roster", origins: [String] = Self.defaultOrigins) {
        self.rpID = rpID
        self.rpName = rpName
        self.origins = origins
    }

    /// Why `text` is no RP ID, nil when it is one: 1 to 253 bytes of dot-separated labels of a–z, 0–9 and `-`.
    public static func rpIDProblem(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= 253 else { return "is empty or longer than 253 bytes" }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty, label.utf8.count <= 63 else { return "has an empty or over-long label" }
            guard label.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }),
                  label.first != "-", label.last != "-"
            else { return "holds a character other than a-z, 0-9, '-' and '.' (write it in lowercase, as punycode)" }
        }
        return nil
    }

    /// Why `text` is no origin for `rpID`, nil when it is one: `http://` or `https://`, then the host (the RP ID or
    /// a name under it, or for `localhost` also 127.0.0.1 and [::1], which browsers treat as secure too), an
    /// optional port, nothing after. An IP origin works only for a browser that allows it; it is accepted here
    /// because the defaults name one.
    public static func originProblem(_ text: String, rpID: String) -> String? {
        let rest: Substring
        if text.hasPrefix("https://") { rest = text.dropFirst(8) }
        else if text.hasPrefix("http://") { rest = text.dropFirst(7) }
        else { return "does not start with http:// or https://" }
        let host: Substring
        let port: Substring?
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[...close]
            let after = rest[rest.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return "has something after its host" }
            port = after.isEmpty ? nil : after.dropFirst()
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            port = rest[rest.index(after: colon)...]
        } else {
            host = rest
            port = nil
        }
        if let port {
            guard !port.isEmpty, port.utf8.count <= 5, port.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  port.first != "0", let number = Int(port), (1...65_535).contains(number)
            else { return "has a port that is not 1 to 65535" }
        }
        guard !host.isEmpty else { return "names no host" }
        let loopback = host == "127.0.0.1" || host == "[::1]"
        if loopback { return rpID == "localhost" ? nil : "names a loopback address, which only RPID=localhost allows" }
        guard rpIDProblem(String(host)) == nil else { return "has a host that is not a lowercase domain name (and nothing after it)" }
        guard host == rpID || host.hasSuffix("." + rpID) else { return "is not on RPID=\(rpID) or a name under it" }
        return nil
    }
}
