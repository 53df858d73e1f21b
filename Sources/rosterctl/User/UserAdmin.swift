import RosterClient
import RosterProtocol

/// The `user` commands that are the administrator's `admin.users.*`: one call each (a list may take several pages).
///
/// They act as the peer, not as a log-in: the daemon lets root and its own uid in, so no stored session is used.
enum UserAdmin {
    static func list(query: String?, _ page: UserCommand.Page, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connect(resume: false)
        let (items, total) = try page.read(pageSize: UserVerb.pageSize) { limit, offset in
            var params: [(String, JSONValue)] = [("limit", .int(limit)), ("offset", .int(offset))]
            if let query { params.insert(("query", .string(query)), at: 0) }
            return try call(connection, "admin.users.list", .object(params), .forReads, verb: "user list")
        }
        if context.json != nil {
            context.printJSON(["items": .array(items), "total": .int(total)])
            return 0
        }
        let legend = !context.options.noLegend
        table(items, details: false).render(legend: legend, style: context.style).forEach(printLine)
        if legend {
            printLine("")
            printLine(ListPage.footer(shown: items.count, total: total, "user", "users"))
        }
        return 0
    }

    static func show(_ username: String, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connect(resume: false)
        let result = try call(connection, "admin.users.show", ["username": .string(username)], .forReads, verb: "user show")
        if context.json != nil {
            context.printJSON(result)
        } else {
            table([result["user"] ?? .null], details: true).render(legend: !context.options.noLegend, style: context.style)
                .forEach(printLine)
        }
        return 0
    }

    static func lock(_ username: String, reason: String?, _ context: VerbContext) throws -> Int32 {
        var params: [(String, JSONValue)] = [("username", .string(username))]
        if let reason { params.append(("reason", .string(reason))) }
        return try change("admin.users.lock", .object(params), verb: "user lock", done: "locked \(username)", context)
    }

    static func unlock(_ username: String, _ context: VerbContext) throws -> Int32 {
        try change("admin.users.unlock", ["username": .string(username)], verb: "user unlock", done: "unlocked \(username)", context)
    }

    static func resetLimit(_ username: String, _ context: VerbContext) throws -> Int32 {
        try change("admin.users.reset_failures", ["username": .string(username)], verb: "user reset-limit",
                   done: "cleared the failed log-ins of \(username)", context)
    }

    /// Deleting is for good, so a person types the name first; a script says `--yes` instead (validate saw to it
    /// that one of the two is possible).
    static func remove(_ username: String, yes: Bool, _ context: VerbContext) throws -> Int32 {
        if !yes {
            let typed = try promptLine("This deletes \(username), its contacts and sessions for good.\n"
                                       + "Type the name to go on: ", hidden: false, what: "name")
            guard typed == username else {
                throw CommandFailure(description: "user rm: '\(typed)' is not \(username); nothing was deleted")
            }
        }
        return try change("admin.users.delete", ["username": .string(username)], verb: "user rm",
                          done: "deleted user \(username)", context)
    }

    /// One write; `done` is what it says on success, `--json` prints the daemon's result as is.
    private static func change(_ method: String, _ params: JSONValue, verb: String, done: String,
                               _ context: VerbContext) throws -> Int32 {
        let connection = try context.connect(resume: false)
        let result = try call(connection, method, params, .forWrites, verb: verb)
        if context.json != nil { context.printJSON(result) } else { printLine(done) }
        return 0
    }

    /// `method`'s result, asked again after the refusals `retry` allows; `forbidden` says who may use these commands,
    /// since the daemon's own message cannot know it came from `rosterctl user`.
    private static func call(_ connection: ClientConnection, _ method: String, _ params: JSONValue,
                             _ retry: RefusalRetry, verb: String) throws -> JSONValue {
        switch try retry.run({ try connection.call(method, params) }) {
        case .success(let value):
            return value
        case .failure(let error) where error.reason == "forbidden":
            throw forbidden(verb)
        case .failure(let error):
            throw failure(verb, error)
        }
    }

    /// What a refused administrator reads (exit 1).
    static func forbidden(_ verb: String) -> CommandFailure {
        CommandFailure(description: "\(verb): administrator commands need root or the daemon's own user (forbidden)")
    }

    /// `admin.users.list` items (or `show`'s user, with `details`) as a table; times as the daemon sends them
    /// (RFC 3339, UTC), `-` for what is not there (whether an email is verified, too, when there is none). The
    /// lock's reason is free text of up to 200 characters: last, so that it pushes no other column.
    static func table(_ users: [JSONValue], details: Bool) -> Table {
        var table = Table(columns: ["USERNAME", "EMAIL", "CREATED", "LAST LOG-IN", "LOCKED", "TOTP"]
            + (details ? ["EMAIL VERIFIED", "FAILED LOG-INS", "SESSIONS", "LOCKED AT", "LOCK REASON"] : []))
        table.rows = users.map { user in
            func text(_ key: String) -> String { user[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "-" }
            func flag(_ key: String, _ on: String, _ off: String) -> String {
                user[key]?.boolValue.map { $0 ? on : off } ?? "-"
            }
            var row = [text("username"), text("email"), text("created_at"), text("last_login_at"),
                       flag("locked", "yes", "no"), flag("totp", "on", "off")]
            if details {
                let verified = text("email") == "-" ? "-" : flag("email_verified", "yes", "no")
                row += [verified, count(user["failed_logins"]), count(user["sessions"]), text("locked_at"),
                        text("locked_reason")]
            }
            return row
        }
        return table
    }

    /// A number as is; a list (should the daemon send the sessions themselves) as how many it holds.
    private static func count(_ value: JSONValue?) -> String {
        if let number = value?.int64Value { return String(number) }
        if let list = value?.arrayValue { return String(list.count) }
        return "-"
    }
}
