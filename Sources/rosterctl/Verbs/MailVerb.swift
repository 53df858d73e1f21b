import RosterClient
import RosterProtocol

/// What `rosterctl mail list` was asked for, parsed from its arguments.
struct MailListCommand: Equatable {
    var status: String?
    var limit = MailVerb.defaultLimit
}

/// `rosterctl mail list`: the daemon's outbox (`admin.mail.list`, root or the daemon's uid), newest first, as a
/// table or with `--json` the daemon's answer; never a message's body or code, which the daemon does not give.
struct MailVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "mail", usage: "mail list [--status S] [--limit N]",
        summary: "(admin) The outbox: each mail's recipient, kind, status and attempts, newest first", group: .daemon,
        options: [("--status S", "only mails that are queued, sent or failed"),
                  ("--limit N", "print at most N mails (default 100, at most 1000)")],
        actions: [(usage, "List the outbox newest first (never a mail's code)")])

    static let usage = "mail list [--status S] [--limit N]"
    /// The statuses `--status` takes, as `admin.mail.list` names them; checked here so a mistyped one lists them.
    static let statuses = ["queued", "sent", "failed"]
    static let defaultLimit = 100
    /// The most `admin.mail.list` answers at once.
    static let maximumLimit = 1_000

    let command: MailListCommand

    init(arguments: [String]) throws(UsageError) {
        command = try MailVerb.parse(arguments)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> MailListCommand {
        guard arguments.first == "list" else {
            throw UsageError(description: arguments.isEmpty ? "usage: rosterctl \(usage)"
                : "mail: unknown command '\(arguments[0])'; use list (see rosterctl mail --help)")
        }
        let parsed = try VerbArguments(Array(arguments.dropFirst()), verb: "mail list", valued: ["--status", "--limit"])
        _ = try parsed.positionals(min: 0, max: 0, verb: "mail list", usage: usage)
        var command = MailListCommand()
        if let status = parsed.values["--status"] {
            guard statuses.contains(status) else {
                throw UsageError(description: "mail list: --status takes one of \(statuses.joined(separator: ", ")), not '\(status)'")
            }
            command.status = status
        }
        if let limit = try ListPage.parse(parsed, verb: "mail list").limit {
            guard limit <= maximumLimit else {
                throw UsageError(description: "mail list: --limit takes at most \(maximumLimit), not \(limit)")
            }
            command.limit = limit
        }
        return command
    }

    func run(_ context: VerbContext) throws -> Int32 {
        let connection = try context.connect(resume: false)
        var params: [(String, JSONValue)] = [("limit", .int(command.limit))]
        if let status = command.status { params.insert(("status", .string(status)), at: 0) }
        let result: JSONValue
        switch try RefusalRetry.forReads.run({ try connection.call("admin.mail.list", .object(params)) }) {
        case .success(let value): result = value
        case .failure(let error) where error.reason == "forbidden": throw UserAdmin.forbidden("mail list")
        case .failure(let error): throw failure("mail list", error)
        }
        context.printListing(result, Self.table, one: "mail", many: "mails")
        return 0
    }

    /// `admin.mail.list` items as a table; `-` for what is not there, times as the daemon sends them (RFC 3339, UTC).
    static func table(_ items: [JSONValue]) -> Table {
        var table = Table(columns: ["ID", "RECIPIENT", "KIND", "STATUS", "ATTEMPTS", "LAST ERROR", "QUEUED AT"])
        table.rows = items.map { item in
            func text(_ key: String) -> String { item[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "-" }
            func number(_ key: String) -> String { item[key]?.int64Value.map(String.init) ?? "-" }
            return [number("id"), text("recipient"), text("kind"), text("status"), number("attempts"), text("last_error"),
                    text("queued_at")]
        }
        return table
    }
}
