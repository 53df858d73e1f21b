import RosterProtocol

extension ClientConnection {
    /// Says `session.hello` with the client's locale and name, returning the daemon's answer.
    public func hello(locale: String?, client: String = "rosterctl", timing: JSONValue? = nil)
        throws(ClientError) -> Result<JSONValue, RemoteError> {
        var params: [(String, JSONValue)] = [("client", .string(client))]
        if let locale { params.append(("locale", .string(locale))) }
        if let timing { params.append(("timing", timing)) }
        return try call("session.hello", .object(params))
    }

    /// Logs this connection in with a stored token; the username, or nil when the token is no longer valid.
    public func resume(token: String) throws(ClientError) -> String? {
        switch try call("session.resume", ["token": .string(token)]) {
        case .success(let result): return result["username"]?.stringValue
        case .failure: return nil
        }
    }
}
