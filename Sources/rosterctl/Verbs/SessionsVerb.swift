import RosterClient
import RosterProtocol

/// What `rosterctl sessions …` was asked to do.
enum SessionsCommand: Equatable {
    case list
    case revoke(String)
    case revokeOthers
}

/// `rosterctl sessions`: the logged-in user's live sessions (one per log-in token), and revoking them.
struct SessionsVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "sessions", usage: "sessions [COMMAND]",
        summary: "List and revoke the logged-in user's sessions", group: .account,
        actions: [(usages.list, "List the sessions: ID, created, last used, client, current"),
                  (usages.revoke, "Log out the session ID (its connections too)"),
                  (usages.revokeOthers, "Log out every session but this one")])

    static let usages = (list: "sessions [list]", revoke: "sessions revoke ID", revokeOthers: "sessions revoke-others")

    let command: SessionsCommand

    init(arguments: [String]) throws(UsageError) {
        command = try SessionsVerb.parse(arguments)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> SessionsCommand {
        let words = try VerbArguments(arguments, verb: "sessions").positionals(min: 0, max: 2, verb: "sessions",
                                                                             usage: configuration.usage)
        switch words.first {
        case nil, "list"?:
            guard words.count <= 1 else { throw UsageError(description: "usage: rosterctl \(usages.list)") }
            return .list
        case "revoke"?:
            guard words.count == 2 else { throw UsageError(description: "usage: rosterctl \(usages.revoke)") }
            let id = words[1].lowercased()
            // The daemon's ids are 16 hex digits; anything else is a typo better caught here than as not_found.
            guard id.count == 16, id.allSatisfy(\.isHexDigit) else {
                throw UsageError(description: "sessions revoke: ID is 16 hex digits as rosterctl sessions lists it, not '\(words[1])'")
            }
            return .revoke(id)
        case "revoke-others"?:
            guard words.count == 1 else { throw UsageError(description: "usage: rosterctl \(usages.revokeOthers)") }
            return .revokeOthers
        case let other?:
            throw UsageError(description: "sessions: unknown command '\(other)'; use list, revoke or revoke-others")
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        switch command {
        case .list:
            context.printListing(try connection.result("session.list", verb: "sessions"), SessionsVerb.table,
                                 one: "session", many: "sessions")
        case .revoke(let id):
            // Revoking this very session logs it out: the kept token is dead, so its file goes as logout's does.
            let current = try connection.result("session.list", verb: "sessions revoke")["items"]?.arrayValue?
                .contains { $0["id"]?.stringValue == id && $0["current"]?.boolValue == true } ?? false
            _ = try connection.result("session.revoke", ["id": .string(id)], verb: "sessions revoke")
            if current { context.sessionFile?.remove() }
            if context.json != nil {
                context.printJSON(["revoked": .string(id), "current": .bool(current)])
            } else {
                printLine(current ? "revoked session \(id) (this one: logged out)" : "revoked session \(id)")
            }
        case .revokeOthers:
            let result = try connection.result("session.revoke_others", verb: "sessions revoke-others")
            if context.json != nil {
                context.printJSON(["revoked": result["revoked"] ?? .int(0)])
            } else {
                let revoked = result["revoked"]?.int64Value ?? 0
                printLine("revoked \(revoked) other \(revoked == 1 ? "session" : "sessions")")
            }
        }
        return 0
    }

    /// Times as the daemon sends them (RFC 3339, UTC), so they sort and compare across hosts; `-` for a client
    /// that did not say its name.
    static func table(_ items: [JSONValue]) -> Table {
        var table = Table(columns: ["ID", "CREATED", "LAST USED", "CLIENT", "CURRENT"])
        table.rows = items.map { item in
            let client = item["client"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "-"
            return [item["id"]?.stringValue ?? "-", item["created_at"]?.stringValue ?? "-",
                    item["last_used_at"]?.stringValue ?? "-", client, item["current"]?.boolValue == true ? "yes" : "no"]
        }
        return table
    }
}
