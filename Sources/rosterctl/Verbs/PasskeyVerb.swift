import RosterClient
import RosterProtocol

/// What `rosterctl passkey …` was asked to do.
enum PasskeyCommand: Equatable {
    case list
    case remove(id: String, passwordStdin: Bool)
}

/// `rosterctl passkey`: the logged-in user's passkeys. Adding one needs an authenticator, which a terminal does
/// not have: that is roster-web's account page (or any program that relays WebAuthn JSON to the socket).
struct PasskeyVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "passkey", usage: "passkey [COMMAND]",
        summary: "List and remove the logged-in user's passkeys", group: .account,
        options: [("--password-stdin", "rm: read the password from stdin")],
        actions: [(usages.list, "List the passkeys: ID, name, created, last used"),
                  (usages.remove, "Remove the passkey ID (the password again)")])

    static let usages = (list: "passkey [list]", remove: "passkey rm ID [--password-stdin]")

    let command: PasskeyCommand

    init(arguments: [String]) throws(UsageError) {
        command = try PasskeyVerb.parse(arguments)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> PasskeyCommand {
        let parsed = try VerbArguments(arguments, verb: "passkey", flags: ["--password-stdin"])
        let words = try parsed.positionals(min: 0, max: 2, verb: "passkey", usage: configuration.usage)
        switch words.first {
        case nil, "list"?:
            guard words.count <= 1, parsed.flags.isEmpty else { throw UsageError(description: "usage: rosterctl \(usages.list)") }
            return .list
        case "rm"?, "remove"?:
            guard words.count == 2 else { throw UsageError(description: "usage: rosterctl \(usages.remove)") }
            let id = words[1]
            // The daemon's ids are unpadded base64url; anything else is a typo better caught here than as not_found.
            guard !id.isEmpty, id.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0)
                                                    || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
            else {
                throw UsageError(description: "passkey rm: ID is base64url as rosterctl passkey lists it, not '\(id)'")
            }
            return .remove(id: id, passwordStdin: parsed.flags.contains("--password-stdin"))
        case let other?:
            throw UsageError(description: "passkey: unknown command '\(other)'; use list or rm")
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        switch command {
        case .list:
            let connection = try context.connectLoggedIn()
            context.printListing(try connection.result("passkey.list", verb: "passkey list"), PasskeyVerb.table,
                                 one: "passkey", many: "passkeys")
        case .remove(let id, let passwordStdin):
            _ = try AccountActions.callWithPassword("passkey.remove", [("id", .string(id))], passwordStdin: passwordStdin,
                                                    verb: "passkey rm", context)
            if context.json != nil { context.printJSON(["removed": .string(id)]) } else { printLine("removed passkey \(id)") }
        }
        return 0
    }

    /// Times as the daemon sends them (RFC 3339, UTC); `-` for a passkey never used to log in.
    static func table(_ items: [JSONValue]) -> Table { CredentialTable.table(items) }
}

/// A list of a user's named credentials (passkeys, app passwords): ID, NAME, CREATED, LAST USED, times as the
/// daemon sends them (RFC 3339, UTC), `-` for one never used to log in.
enum CredentialTable {
    static func table(_ items: [JSONValue]) -> Table {
        var table = Table(columns: ["ID", "NAME", "CREATED", "LAST USED"])
        table.rows = items.map { item in
            [item["id"]?.stringValue ?? "-", item["name"]?.stringValue ?? "-", item["created_at"]?.stringValue ?? "-",
             item["last_used_at"]?.stringValue ?? "-"]
        }
        return table
    }
}
