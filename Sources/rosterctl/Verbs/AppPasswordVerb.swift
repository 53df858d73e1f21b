import RosterClient
import RosterProtocol

/// What `rosterctl app-password …` was asked to do.
enum AppPasswordCommand: Equatable {
    case create(name: String)
    case list
    case remove(id: String)
}

/// `rosterctl app-password`: the logged-in user's app passwords, the secrets a CardDAV client (DAVx5, Thunderbird,
/// iOS, vdirsyncer) logs in with instead of the account's password. A new one's secret is printed once.
struct AppPasswordVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "app-password", usage: "app-password [COMMAND]",
        summary: "Make, list and remove the logged-in user's app passwords (CardDAV)", group: .account,
        options: [],
        actions: [(usages.create, "Make an app password named NAME and print it, this once"),
                  (usages.list, "List the app passwords: ID, name, created, last used"),
                  (usages.remove, "Remove the app password ID")])

    static let usages = (create: "app-password create NAME", list: "app-password [list]",
                         remove: "app-password rm ID")

    let command: AppPasswordCommand

    init(arguments: [String]) throws(UsageError) {
        command = try AppPasswordVerb.parse(arguments)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> AppPasswordCommand {
        let parsed = try VerbArguments(arguments, verb: "app-password", flags: [])
        let words = try parsed.positionals(min: 0, max: 2, verb: "app-password", usage: configuration.usage)
        switch words.first {
        case nil, "list"?:
            guard words.count <= 1 else { throw UsageError(description: "usage: rosterctl \(usages.list)") }
            return .list
        case "create"?, "add"?:
            guard words.count == 2, !words[1].allSatisfy(\.isWhitespace) else {
                throw UsageError(description: "usage: rosterctl \(usages.create)")
            }
            return .create(name: words[1])
        case "rm"?, "remove"?:
            guard words.count == 2 else { throw UsageError(description: "usage: rosterctl \(usages.remove)") }
            let id = words[1]
            // The daemon's ids are lower-case base32; anything else is a typo better caught here than as not_found.
            guard !id.isEmpty, id.utf8.allSatisfy({ (0x32...0x37).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw UsageError(description: "app-password rm: ID is as rosterctl app-password lists it, not '\(id)'")
            }
            return .remove(id: id)
        case let other?:
            throw UsageError(description: "app-password: unknown command '\(other)'; use create, list or rm")
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        switch command {
        case .create(let name):
            let made = try connection.result("account.app_password_create", ["name": .string(name)],
                                             verb: "app-password create")
            if context.json != nil { context.printJSON(made); return 0 }
            printLine("app password \(made["id"]?.stringValue ?? "-") \"\(made["name"]?.stringValue ?? name)\":")
            printLine(made["password"]?.stringValue ?? "-")
            printLine("Shown this once: type it as the password in the CardDAV client (not for rosterctl login).")
        case .list:
            context.printListing(try connection.result("account.app_password_list", verb: "app-password list"),
                                 CredentialTable.table, one: "app password", many: "app passwords")
        case .remove(let id):
            _ = try connection.result("account.app_password_remove", ["id": .string(id)], verb: "app-password rm")
            if context.json != nil { context.printJSON(["removed": .string(id)]) } else { printLine("removed app password \(id)") }
        }
        return 0
    }
}
