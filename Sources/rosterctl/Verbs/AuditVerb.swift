import Glibc
import RosterClient
import RosterCore
import RosterProtocol

/// What `rosterctl audit` was asked for, parsed from its arguments.
struct AuditCommand: Equatable {
    var user: String?
    var event: String?
    /// As typed: read against the clock when the command runs (`SinceTime`).
    var since: String?
    /// How many entries to print; with `--follow`, how many past ones come before the live ones.
    var limit: Int?
    var follow = false
}

/// `rosterctl audit`: the daemon's audit log (`admin.audit`, root or the daemon's uid), newest first; with
/// `--follow` the last few oldest first, then every new entry as it is written, until Ctrl-C or SIGTERM (exit 0).
struct AuditVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "audit", usage: "audit [--user NAME] [--event E] [--since T] [--limit N] [--follow]",
        summary: "(admin) The audit log, newest first; --follow prints new entries until Ctrl-C", group: .users,
        options: [("--user NAME", "only this user's entries (a username or an email)"),
                  ("--event E", "only this event (login, logout, register, locked, ...)"),
                  ("--since T", "only entries at or after T: RFC 3339, or a span back from now (1h, 2d)"),
                  ("--limit N", "print at most N entries (default 100; with --follow, 10 before the live ones)"),
                  ("--follow", "then print each new entry as it is written, until Ctrl-C")])

    /// Entries asked per `admin.audit` call (the daemon's most); longer lists are read page by page.
    static let pageSize = 1_000
    static let defaultLimit = 100
    /// The past entries `--follow` prints before the live ones.
    static let followBacklog = 10
    /// The events `--event` takes: the twenty-four of protocol.md §The audit log, as `admin.audit` names them. Checked
    /// here, so a mistyped one is a usage error that lists them rather than the daemon's bare "out of range".
    static let events = ["register", "login", "logout", "resume", "password_changed", "email_changed", "deleted", "locked",
                         "unlocked", "recovery_codes_created", "recovered", "totp_enabled", "totp_disabled",
                         "session_revoked", "failures_reset", "backup", "mail_queued", "mail_failed", "email_verified",
                         "passkey_added", "passkey_removed", "passkey_rejected", "app_password_added",
                         "app_password_removed"]

    let command: AuditCommand

    init(arguments: [String]) throws(UsageError) {
        command = try AuditVerb.parse(arguments)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> AuditCommand {
        let parsed = try VerbArguments(arguments, verb: "audit", flags: ["--follow"],
                                       valued: ["--user", "--event", "--since", "--limit"])
        _ = try parsed.positionals(min: 0, max: 0, verb: "audit", usage: configuration.usage)
        var command = AuditCommand(follow: parsed.flags.contains("--follow"))
        command.user = parsed.values["--user"].flatMap { $0.isEmpty ? nil : $0 }
        command.event = parsed.values["--event"].flatMap { $0.isEmpty ? nil : $0 }
        if let event = command.event, !events.contains(event) {
            throw UsageError(description: "audit: --event takes one of \(events.joined(separator: ", ")), not '\(event)'")
        }
        if let since = parsed.values["--since"] {
            do throws(SinceTime.Failure) {
                _ = try SinceTime.parse(since, nowMs: 0)
            } catch {
                throw UsageError(description: "audit: \(error)")
            }
            command.since = since
        }
        command.limit = try ListPage.parse(parsed, verb: "audit").limit
        return command
    }

    func run(_ context: VerbContext) throws -> Int32 {
        // Blocked before anything is asked, so a Ctrl-C that comes early still ends the command cleanly.
        let signals = command.follow ? try SignalWatch([SIGINT, SIGTERM]) : nil
        let connection = try context.connect(resume: false)
        var filter: [(String, JSONValue)] = []
        if let user = command.user { filter.append(("username", .string(user))) }
        if let event = command.event { filter.append(("event", .string(event))) }
        if let since = command.since {
            let sinceMs: Int64
            do throws(SinceTime.Failure) {
                sinceMs = try SinceTime.parse(since, nowMs: Self.nowMs())
            } catch {
                // Parsed once already when the command was read, so only a clock gone mad gets here.
                throw UsageError(description: "audit: \(error)")
            }
            filter.append(("since", .string(UTCTime.rfc3339(unixMs: sinceMs))))
        }
        let printer = AuditPrinter(context: context)
        guard let signals else {
            let entries = try Self.read(connection, filter, limit: command.limit ?? Self.defaultLimit)
            printer.list(entries)
            return 0
        }
        let backlog = try Self.call(connection, .object(filter + [("limit", .int(command.limit ?? Self.followBacklog)),
                                                                  ("follow", true)]), retry: nil)
        let past = (backlog["items"]?.arrayValue ?? []).reversed()
        printer.header()
        var lastID: Int64 = 0
        for entry in past {
            printer.row(entry)
            lastID = max(lastID, entry["id"]?.int64Value ?? 0)
        }
        return try Self.followLive(connection, signals: signals, after: lastID, printer)
    }

    /// Prints each `audit` event with an id past `lastID` (the page and the first events may overlap) until a
    /// signal, which ends the command well (exit 0).
    private static func followLive(_ connection: ClientConnection, signals: SignalWatch, after lastID: Int64,
                                   _ printer: AuditPrinter) throws -> Int32 {
        var lastID = lastID
        func show(_ event: JSONValue) {
            if event["type"] == "audit_missed" { return printer.missed(event) }
            guard event["type"] == "audit", let entry = event["entry"], let id = entry["id"]?.int64Value, id > lastID else { return }
            lastID = id
            printer.row(entry)
        }
        while true {
            while connection.hasBufferedInput {
                if case .event(let event)? = try connection.receive(timeoutMs: 0) { show(event) }
            }
            var entries = [pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: signals.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if entries[1].revents != 0, !signals.take().isEmpty { return 0 }
            if entries[0].revents != 0, case .event(let event)? = try connection.receive(timeoutMs: 0) { show(event) }
        }
    }

    /// Up to `limit` entries newest first, `pageSize` at a time, each page before the last one's oldest id.
    private static func read(_ connection: ClientConnection, _ filter: [(String, JSONValue)], limit: Int) throws -> [JSONValue] {
        var entries: [JSONValue] = []
        var before: Int64?
        while entries.count < limit {
            let want = min(pageSize, limit - entries.count)
            var params = filter + [("limit", .int(want))]
            if let before { params.append(("before", .int(before))) }
            let page = try call(connection, .object(params), retry: .forReads)["items"]?.arrayValue ?? []
            entries += page
            // A short page is the log's end; ids start at 1, so nothing is older than entry 1.
            guard page.count == want, let oldest = page.last?["id"]?.int64Value, oldest > 1 else { break }
            before = oldest
        }
        return entries
    }

    /// `admin.audit`'s result. A follower is not asked again after `busy`: its budget frees only when another
    /// follower stops, which retries of a few seconds would not see.
    private static func call(_ connection: ClientConnection, _ params: JSONValue, retry: RefusalRetry?) throws -> JSONValue {
        let send = { try connection.call("admin.audit", params) }
        switch try retry.map({ try $0.run(send) }) ?? send() {
        case .success(let value): return value
        case .failure(let error) where error.reason == "forbidden": throw UserAdmin.forbidden("audit")
        case .failure(let error): throw failure("audit", error)
        }
    }

    static func nowMs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// How `rosterctl audit` prints entries: a table (with `--follow`, in columns wide enough for the usual values,
/// since later rows cannot be measured beforehand), or with `--json` one JSON object per entry per line.
struct AuditPrinter {
    let context: VerbContext

    static let columns = ["TIME", "EVENT", "USER", "OUTCOME", "REASON", "PEER", "CLIENT"]
    /// `--follow`'s column widths: a time, the longest event and outcome, and room for common names and reasons.
    static let followWidths = [20, 22, 12, 9, 16, 12, 0]

    func list(_ entries: [JSONValue]) {
        if context.json != nil { return entries.forEach(context.printJSON) }
        let legend = !context.options.noLegend
        Self.table(entries).render(legend: legend, style: context.style).forEach(printLine)
        if legend && !entries.isEmpty {
            printLine("")
            printLine("\(entries.count) entr\(entries.count == 1 ? "y" : "ies") listed.")
        }
    }

    /// The header line, before the first row (`--follow`).
    func header() {
        guard context.json == nil, !context.options.noLegend else { return }
        printLine(context.style.paint(Self.aligned(Self.columns), .bold))
    }

    /// One entry as it comes (`--follow`).
    func row(_ entry: JSONValue) {
        if context.json != nil { return context.printJSON(entry) }
        printLine(Self.aligned(Self.cells(entry)))
    }

    /// The daemon's `audit_missed` (`--follow` read too slowly): with `--json` the event as it came, else one line
    /// that says how many entries are not shown and how to read them.
    func missed(_ event: JSONValue) {
        if context.json != nil { return context.printJSON(event) }
        printLine(context.style.paint(Self.missedLine(event), .bold))
    }

    static func missedLine(_ event: JSONValue) -> String {
        let count = event["count"]?.int64Value ?? 0
        let first = event["first_id"]?.int64Value.map(String.init) ?? "?"
        let last = event["last_id"]?.int64Value.map(String.init) ?? "?"
        let entries = count == 1 ? "1 entry (id \(first))" : "\(count) entries (ids \(first) to \(last))"
        return "-- \(entries) not shown: this output was read too slowly; they are in the log (rosterctl audit) --"
    }

    static func table(_ entries: [JSONValue]) -> Table {
        var table = Table(columns: columns)
        table.rows = entries.map(cells)
        return table
    }

    /// An entry's cells: `-` for what it lacks, a log-in's method after its event (`login (passkey)`), the peer
    /// as `uid/pid` (after the remote address when a gateway spoke for someone: `203.0.113.5 (33/812)`), and
    /// entries the per-minute cap left out before this one after its reason.
    static func cells(_ entry: JSONValue) -> [String] {
        func text(_ key: String) -> String { entry[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "-" }
        func number(_ key: String) -> String { entry[key]?.int64Value.map(String.init) ?? "-" }
        var event = text("event")
        // Only `login` entries carry one; the column stays within `followWidths` ("login (app_password)" is 20).
        if let method = entry["method"]?.stringValue, !method.isEmpty { event += " (\(method))" }
        var reason = text("reason")
        if let suppressed = entry["suppressed"]?.int64Value, suppressed > 0 { reason += " (+\(suppressed) suppressed)" }
        var peer = "\(number("peer_uid"))/\(number("peer_pid"))"
        if let remote = entry["remote"]?.stringValue, !remote.isEmpty { peer = "\(remote) (\(peer))" }
        return [text("time"), event, text("username"), text("outcome"), reason, peer, text("client")]
    }

    /// Cells padded to `followWidths`, without trailing spaces; a longer cell pushes the rest to the right. Each
    /// is escaped as `Table`'s are.
    static func aligned(_ cells: [String]) -> String {
        cells.map(FreeText.escaped).enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell.padding(followWidths[index])
        }.joined(separator: " ")
    }
}
