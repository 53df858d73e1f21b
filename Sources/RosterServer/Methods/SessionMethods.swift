import RosterCore
import RosterRuntime
import RosterProtocol

/// `session.*` and `rpc.describe`: who the client is, which language it reads, and what the server offers.
extension Server {
    static let timingRange: ClosedRange<Int64> = 0...10_000

    func sessionMethods() -> [Method] {
        [
            Method(spec: MethodSpec(
                "session.hello",
                summary: "Introduce the client; set this connection's locale and timing overrides.",
                params: [
                    .optional("locale", .string),
                    .optional("client", .string),
                    .optional("timing", .object([
                        .optional("debounce_ms", .integer(Self.timingRange)),
                        .optional("throttle_ms", .integer(Self.timingRange)),
                    ])),
                ],
                result: .object([
                    FieldSpec("server", .string), FieldSpec("version", .string),
                    FieldSpec("protocol", .integer(1...1)), FieldSpec("locale", .oneOf(RosterLocale.allCases.map(\.rawValue))),
                    FieldSpec("timing", .object([FieldSpec("debounce_ms", .integer(Self.timingRange)),
                                                 FieldSpec("throttle_ms", .integer(Self.timingRange))])),
                ])), handler: Server.hello, dependence: .none),
            Method(spec: MethodSpec(
                "session.whoami",
                summary: "Who this connection is logged in as.",
                result: .object([FieldSpec("user", .described("{username, email?} or null"))])), handler: Server.whoami),
            Method(spec: MethodSpec(
                "session.logout",
                summary: "Log this connection out; a session event with user null follows.",
                result: .object([])), handler: Server.logout),
            Method(spec: MethodSpec(
                "rpc.describe",
                summary: "Every method with its params and result shapes.",
                result: .object([FieldSpec("protocol", .integer(1...1)),
                                 FieldSpec("methods", .array(.described("{name, summary, params, result}")))])),
                   handler: Server.describe, dependence: .none),
        ]
    }

    private func hello(_ call: Call) {
        let session = call.session
        var locale = session.locale
        if let tag = call.params.string("locale") {
            guard let chosen = RosterLocale(tag: tag) else {
                call.fail(.invalidParams(param: "locale", problem: .unsupportedLocale))
                return
            }
            locale = chosen
        }
        session.locale = locale
        if let timing = call.params["timing"] {
            if let debounce = timing["debounce_ms"]?.int64Value { session.debounceOverride = .milliseconds(debounce) }
            if let throttle = timing["throttle_ms"]?.int64Value { session.throttleOverride = .milliseconds(throttle) }
        }
        session.client = call.params.string("client")
        session.greeted = true
        call.succeed([
            "server": .string(RosterVersion.server),
            "version": .string(RosterVersion.version),
            "protocol": .int(RosterVersion.wireProtocol),
            "locale": .string(session.locale.rawValue),
            "timing": [
                "debounce_ms": .int(session.debounce(under: config.policy).nanoseconds / 1_000_000),
                "throttle_ms": .int(session.throttle(under: config.policy).nanoseconds / 1_000_000),
            ],
        ])
    }

    private func whoami(_ call: Call) {
        guard let user = call.session.user else { return call.succeed(["user": .null]) }
        var described: [(String, JSONValue)] = [("username", .string(user.username))]
        if let email = user.email { described.append(("email", .string(email))) }
        call.succeed(["user": .object(described)])
    }

    /// Revokes the token first, so that once the answer arrives the token no longer resumes anything, and every
    /// other connection that resumed it is logged out too.
    private func logout(_ call: Call) {
        call.asAuthChange { [self] answer in
            guard let tokenHash = call.session.tokenHash else {
                logOut(call.connection)
                return answer(.success([:]))
            }
            accounts.revoke(tokenHash: tokenHash, charge: call.connection.queueCharge) { [self] result in
                answer(result.map { _ in
                    tokenRevoked(tokenHash, except: call.connection)
                    logOut(call.connection)
                    return [:]
                })
            }
        }
    }

    private func describe(_ call: Call) {
        call.succeed([
            "protocol": .int(RosterVersion.wireProtocol),
            "methods": .array(methodSpecs.map(\.json)),
        ])
    }
}
