import Glibc
import RosterClient
import RosterProtocol

/// What `rosterctl contacts …` was asked to do, parsed from its arguments.
enum ContactsCommand: Equatable {
    /// Which slice of a list to print; no limit prints them all.
    typealias Page = ListPage

    /// The fields a command sets; nil leaves a field alone, "" clears it (edit).
    struct Fields: Equatable {
        var name: String?
        var phone: String?
        var email: String?
        var note: String?
    }

    case interactive
    case list(Page)
    case search(String, Page)
    case add(Fields)
    case edit(Int64, Fields)
    case remove(Int64)
    case importFile(String, ContactFormat?)
    case export(ContactFormat)
    /// What changed since a token (nil: every contact).
    case changes(since: String?)
    /// A contact's card by uid.
    case vcard(uid: String)
    /// A card from a file (or stdin) put under a uid, with the etag it must still have, or none.
    case putVCard(uid: String, path: String, ifMatch: String?, ifNoneMatch: Bool)
}

/// `rosterctl contacts`: the live search on a terminal, and list, search, add, edit, rm, import and export
/// for scripts. Every one of them acts as the stored log-in.
struct ContactsVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "contacts", usage: "contacts [COMMAND] [ARGUMENTS...]",
        summary: "Search and edit the logged-in user's contacts (a live search on a terminal)", group: .contacts,
        options: [("--limit N", "list, search: print at most N contacts (default: all)"),
                  ("--offset N", "list, search: skip the first N"),
                  ("--name NAME", "edit: the new name"),
                  ("--phone PHONE", "add, edit: digits, spaces and + - ( ); \"\" clears it"),
                  ("--email ADDRESS", "add, edit: an email address; \"\" clears it"),
                  ("--note TEXT", "add, edit: a note; \"\" clears it"),
                  ("--format vcard|csv", "import: the file's format (default: from its name or content)"),
                  ("", "export: the format to write (default: vcard)"),
                  ("--since TOKEN", "changes: only what changed after TOKEN (a token changes printed)"),
                  ("--if-match ETAG", "put-vcard: only if the contact still has ETAG"),
                  ("--if-none-match", "put-vcard: only if no contact has UID yet")],
        actions: [("contacts", "Search contacts as you type (on a terminal; else list)"),
                  (usages.list, "List contacts by name"),
                  (usages.search, "List the contacts matching QUERY, best first"),
                  (usages.add, "Add a contact and print it with its ID"),
                  (usages.edit, "Change a contact; \"\" clears an optional field"),
                  (usages.remove, "Remove a contact"),
                  (usages.importFile, "Import vCard or CSV (FILE - is stdin); exit 1 if any were rejected"),
                  (usages.export, "Write every contact to stdout (vCard by default)"),
                  (usages.changes, "List what changed since a token, removals included, and the next token"),
                  (usages.vcard, "Write a contact's card to stdout, byte for byte as it was put"),
                  (usages.putVCard, "Store a vCard 3.0 or 4.0 file (FILE - is stdin) under UID as it is")])

    private static let usages = (
        list: "contacts list [--limit N] [--offset N]",
        search: "contacts search QUERY [--limit N] [--offset N]",
        add: "contacts add NAME [--phone P] [--email E] [--note N]",
        edit: "contacts edit ID [--name N] [--phone P] [--email E] [--note N]",
        remove: "contacts rm ID",
        importFile: "contacts import FILE [--format vcard|csv]",
        export: "contacts export [--format vcard|csv]",
        changes: "contacts changes [--since TOKEN]",
        vcard: "contacts vcard UID",
        putVCard: "contacts put-vcard UID FILE [--if-match ETAG] [--if-none-match]")

    /// The daemon's `contacts.list` takes at most this many a call; longer lists are read page by page.
    static let pageSize = 1000
    /// Contacts asked per export page; the daemon also cuts a page at about a mebibyte.
    static let exportPageSize: Int64 = 10_000
    /// An import piece's data as a JSON string: under the daemon's default 64 KiB line with room for the envelope.
    static let importBudget = 60_000

    let command: ContactsCommand

    init(arguments: [String]) throws(UsageError) {
        command = try ContactsVerb.parse(arguments)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> ContactsCommand {
        guard let action = arguments.first else { return .interactive }
        let rest = Array(arguments.dropFirst())
        let fieldOptions: Set<String> = ["--phone", "--email", "--note"]
        switch action {
        case "list":
            let parsed = try VerbArguments(rest, verb: "contacts list", valued: ["--limit", "--offset"])
            _ = try parsed.positionals(min: 0, max: 0, verb: "contacts list", usage: usages.list)
            return .list(try ListPage.parse(parsed, verb: "contacts list"))
        case "search":
            let parsed = try VerbArguments(rest, verb: "contacts search", valued: ["--limit", "--offset"])
            let words = try parsed.positionals(min: 1, max: 1, verb: "contacts search", usage: usages.search)
            return .search(words[0], try ListPage.parse(parsed, verb: "contacts search"))
        case "add":
            let parsed = try VerbArguments(rest, verb: "contacts add", valued: fieldOptions)
            let words = try parsed.positionals(min: 1, max: 1, verb: "contacts add", usage: usages.add)
            // A new contact has nothing to clear: an empty option is the same as leaving it out.
            func given(_ option: String) -> String? { parsed.values[option].flatMap { $0.isEmpty ? nil : $0 } }
            return .add(.init(name: words[0], phone: given("--phone"), email: given("--email"), note: given("--note")))
        case "edit":
            let parsed = try VerbArguments(rest, verb: "contacts edit", valued: fieldOptions.union(["--name"]))
            let words = try parsed.positionals(min: 1, max: 1, verb: "contacts edit", usage: usages.edit)
            let fields = ContactsCommand.Fields(name: parsed.values["--name"], phone: parsed.values["--phone"],
                                email: parsed.values["--email"], note: parsed.values["--note"])
            guard fields != ContactsCommand.Fields() else {
                throw UsageError(description: "contacts edit: nothing to change; give --name, --phone, --email or --note")
            }
            return .edit(try contactID(words[0], verb: "contacts edit"), fields)
        case "rm":
            let words = try VerbArguments(rest, verb: "contacts rm").positionals(min: 1, max: 1, verb: "contacts rm", usage: usages.remove)
            return .remove(try contactID(words[0], verb: "contacts rm"))
        case "import":
            let parsed = try VerbArguments(rest, verb: "contacts import", valued: ["--format"])
            let words = try parsed.positionals(min: 1, max: 1, verb: "contacts import", usage: usages.importFile)
            return .importFile(words[0], try format(parsed, verb: "contacts import"))
        case "export":
            let parsed = try VerbArguments(rest, verb: "contacts export", valued: ["--format"])
            _ = try parsed.positionals(min: 0, max: 0, verb: "contacts export", usage: usages.export)
            return .export(try format(parsed, verb: "contacts export") ?? .vcard)
        case "changes":
            let parsed = try VerbArguments(rest, verb: "contacts changes", valued: ["--since"])
            _ = try parsed.positionals(min: 0, max: 0, verb: "contacts changes", usage: usages.changes)
            return .changes(since: parsed.values["--since"])
        case "vcard":
            let words = try VerbArguments(rest, verb: "contacts vcard").positionals(min: 1, max: 1, verb: "contacts vcard",
                                                                                      usage: usages.vcard)
            return .vcard(uid: words[0])
        case "put-vcard":
            let parsed = try VerbArguments(rest, verb: "contacts put-vcard", flags: ["--if-none-match"], valued: ["--if-match"])
            let words = try parsed.positionals(min: 2, max: 2, verb: "contacts put-vcard", usage: usages.putVCard)
            let ifNoneMatch = parsed.flags.contains("--if-none-match")
            if ifNoneMatch && parsed.values["--if-match"] != nil {
                throw UsageError(description: "contacts put-vcard: give --if-match or --if-none-match, not both")
            }
            return .putVCard(uid: words[0], path: words[1], ifMatch: parsed.values["--if-match"], ifNoneMatch: ifNoneMatch)
        default:
            throw UsageError(description: "contacts: unknown command '\(action)'; "
                + "use list, search, add, edit, rm, import, export, changes, vcard or put-vcard (see rosterctl contacts --help)")
        }
    }

    private static func contactID(_ text: String, verb: String) throws(UsageError) -> Int64 {
        guard let id = Int64(text), id > 0 else { throw UsageError(description: "\(verb): ID is a contact's number, not '\(text)'") }
        return id
    }

    private static func format(_ parsed: VerbArguments, verb: String) throws(UsageError) -> ContactFormat? {
        guard let text = parsed.values["--format"] else { return nil }
        guard let format = ContactFormat(rawValue: text.lowercased()) else {
            throw UsageError(description: "\(verb): --format takes vcard or csv, not '\(text)'")
        }
        return format
    }

    // MARK: running

    func run(_ context: VerbContext) throws -> Int32 {
        switch command {
        case .interactive:
            // Without a terminal there is no one to type a query: a script gets the whole list instead.
            guard canRunInteractively(environment: context.environment) else { return try list(nil, ContactsCommand.Page(), context) }
            return try ContactSearch.run(context)
        case .list(let page): return try list(nil, page, context)
        case .search(let query, let page): return try list(query, page, context)
        case .add(let fields): return try add(fields, context)
        case .edit(let id, let fields): return try edit(id, fields, context)
        case .remove(let id): return try remove(id, context)
        case .importFile(let path, let format): return try importFile(path, format, context)
        case .export(let format): return try export(format, context)
        case .changes(let since): return try changes(since, context)
        case .vcard(let uid): return try vcard(uid, context)
        case .putVCard(let uid, let path, let ifMatch, let ifNoneMatch):
            return try putVCard(uid, path: path, ifMatch: ifMatch, ifNoneMatch: ifNoneMatch, context)
        }
    }

    /// Every page of `contacts.changes` after `since`: the contacts written (a table), the uids removed, and the
    /// token to pass as `--since` next time.
    private func changes(_ since: String?, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        var token = since
        var changed: [JSONValue] = []
        var removed: [JSONValue] = []
        while true {
            let params: JSONValue = token.map { ["since": .string($0)] } ?? [:]
            let page: JSONValue
            switch try callRetryingBusy(connection, "contacts.changes", params) {
            case .success(let result): page = result
            case .failure(let error): throw failure("contacts changes", error)
            }
            changed += page["changed"]?.arrayValue ?? []
            removed += page["removed"]?.arrayValue ?? []
            token = page["token"]?.stringValue
            if page["more"]?.boolValue != true { break }
        }
        if context.json != nil {
            context.printJSON(["token": .string(token ?? ""), "changed": .array(changed), "removed": .array(removed)])
            return 0
        }
        contactsTable(changed.compactMap(ContactRecord.init)).render(legend: !context.options.noLegend, style: context.style)
            .forEach(printLine)
        for uid in removed.compactMap(\.stringValue) { printLine("removed \(uid)") }
        printLine("token \(token ?? "")")
        return 0
    }

    /// The card as the daemon keeps it, CRLF and all.
    private func vcard(_ uid: String, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        switch try callRetryingBusy(connection, "contacts.get_vcard", ["uid": .string(uid)]) {
        case .success(let result):
            if context.json != nil { context.printJSON(result) } else { writeRaw(1, result["vcard"]?.stringValue ?? "") }
            return 0
        case .failure(let error): throw failure("contacts vcard \(uid)", error)
        }
    }

    private func putVCard(_ uid: String, path: String, ifMatch: String?, ifNoneMatch: Bool,
                          _ context: VerbContext) throws -> Int32 {
        let card = String(decoding: try readImportFile(path, verb: "contacts put-vcard"), as: UTF8.self)
        let connection = try context.connectLoggedIn()
        var params: [(String, JSONValue)] = [("uid", .string(uid)), ("vcard", .string(card))]
        if let ifMatch { params.append(("if_match", .string(ifMatch))) }
        if ifNoneMatch { params.append(("if_none_match", "*")) }
        switch try connection.call("contacts.put_vcard", .object(params)) {
        case .success(let result):
            if context.json != nil {
                context.printJSON(result)
            } else {
                let created = result["created"]?.boolValue == true
                printLine("\(created ? "created" : "updated") \(uid), etag \(result["etag"]?.stringValue ?? "")")
            }
            return 0
        case .failure(let error): throw failure("contacts put-vcard \(uid)", error)
        }
    }

    /// `list` and `search`: every contact (or the page asked for), read in pages the daemon accepts.
    private func list(_ query: String?, _ page: ContactsCommand.Page, _ context: VerbContext) throws -> Int32 {
        let verb = query == nil ? "contacts list" : "contacts search"
        let connection = try context.connectLoggedIn()
        let (items, total) = try page.read(pageSize: ContactsVerb.pageSize) { limit, offset in
            var params: [(String, JSONValue)] = [("limit", .int(limit)), ("offset", .int(offset))]
            if let query { params.insert(("query", .string(query)), at: 0) }
            switch try callRetryingBusy(connection, query == nil ? "contacts.list" : "contacts.search", .object(params)) {
            case .success(let value): return value
            case .failure(let error): throw failure(verb, error)
            }
        }
        if context.json != nil {
            context.printJSON(["items": .array(items), "total": .int(total)])
            return 0
        }
        let legend = !context.options.noLegend
        contactsTable(items.compactMap(ContactRecord.init)).render(legend: legend, style: context.style).forEach(printLine)
        if legend {
            printLine("")
            printLine(ListPage.footer(shown: items.count, total: total, "contact", "contacts"))
        }
        return 0
    }

    private func add(_ fields: ContactsCommand.Fields, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        var params: [(String, JSONValue)] = [("name", .string(fields.name ?? ""))]
        params += parameters(fields, includingName: false)
        switch try connection.call("contacts.add", .object(params)) {
        case .success(let result): return printContact(result, context)
        case .failure(let error): throw failure("contacts add", error)
        }
    }

    private func edit(_ id: Int64, _ fields: ContactsCommand.Fields, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        let params: [(String, JSONValue)] = [("id", .int(id))] + parameters(fields, includingName: true)
        switch try connection.call("contacts.update", .object(params)) {
        case .success(let result): return printContact(result, context)
        case .failure(let error): throw failure("contacts edit \(id)", error)
        }
    }

    private func parameters(_ fields: ContactsCommand.Fields, includingName: Bool) -> [(String, JSONValue)] {
        let named: [(String, String?)] = [("name", includingName ? fields.name : nil), ("phone", fields.phone),
                                          ("email", fields.email), ("note", fields.note)]
        return named.compactMap { key, value in value.map { (key, JSONValue.string($0)) } }
    }

    /// An added or edited contact: the daemon's answer for scripts, a one-row table for people.
    private func printContact(_ result: JSONValue, _ context: VerbContext) -> Int32 {
        if context.json != nil {
            context.printJSON(result)
        } else if let contact = result["contact"].flatMap(ContactRecord.init) {
            contactsTable([contact]).render(legend: !context.options.noLegend, style: context.style).forEach(printLine)
        }
        return 0
    }

    private func remove(_ id: Int64, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        if case .failure(let error) = try connection.call("contacts.remove", ["id": .int(id)]) {
            throw failure("contacts rm \(id)", error)
        }
        if context.json != nil { context.printJSON(["removed": .int(id)]) } else { printLine("removed contact \(id)") }
        return 0
    }

    /// Follows the daemon's pages, writing each as it comes, so a book of any size is exported with bounded memory
    /// on both sides. A daemon that knows no pages gets the one-answer request. A page that fails ends the export
    /// with exit 1: what was written by then is not the whole book.
    private func export(_ format: ContactFormat, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        connection.answerTimeoutMs = 300_000
        var cursor: String?
        var collected = ""
        repeat {
            var params: [(String, JSONValue)] = [("format", .string(format.rawValue)), ("limit", .int(ContactsVerb.exportPageSize))]
            if let cursor { params.append(("cursor", .string(cursor))) }
            let page: JSONValue
            switch try callRetryingBusy(connection, "contacts.export", .object(params)) {
            case .success(let result):
                page = result
            case .failure(let error) where cursor == nil && error.reason == "unknown_param":
                page = try exportWhole(format, connection)
            case .failure(let error):
                throw failure("contacts export", error)
            }
            let data = page["data"]?.stringValue ?? ""
            // As the daemon wrote it, CRLF and all: that is what vCard and CSV files hold.
            if context.json != nil { collected += data } else { writeRaw(1, data) }
            cursor = page["next_cursor"]?.stringValue
        } while cursor != nil
        if context.json != nil { context.printJSON(["data": .string(collected)]) }
        return 0
    }

    private func exportWhole(_ format: ContactFormat, _ connection: ClientConnection) throws -> JSONValue {
        switch try callRetryingBusy(connection, "contacts.export", ["format": .string(format.rawValue)]) {
        case .success(let result): return result
        case .failure(let error): throw failure("contacts export", error)
        }
    }

    /// A read the daemon defers (`busy`, or `storage_unavailable` while its database is away) is asked again
    /// after the wait it names (see `RefusalRetry`).
    private func callRetryingBusy(_ connection: ClientConnection, _ method: String,
                                  _ params: JSONValue) throws -> Result<JSONValue, RemoteError> {
        try RefusalRetry.forReads.run { try connection.call(method, params) }
    }

    /// Sends the file in pieces that fit the daemon's line limit, sums the answers and reports each rejection
    /// with the file's own line number. Exit 1 when anything was rejected, so a script notices; the accepted
    /// contacts are kept either way.
    private func importFile(_ path: String, _ givenFormat: ContactFormat?, _ context: VerbContext) throws -> Int32 {
        let content = try readImportFile(path, verb: "contacts import")
        let format = givenFormat ?? ContactFormat.guess(path: path, content: content)
        let plan = ImportPlan(format: format, content: content)
        let connection = try context.connectLoggedIn()
        connection.answerTimeoutMs = 300_000
        var tally = ImportTally()
        var pieces = plan.pieces(budget: ContactsVerb.importBudget)
        while !pieces.isEmpty {
            let piece = pieces.removeFirst()
            let params: JSONValue = ["format": .string(format.rawValue), "data": .string(plan.data(piece))]
            switch try RefusalRetry.forWrites.run({ try connection.callAlone("contacts.import", params) }) {
            case .success(let result):
                tally.add(result, plan: plan, piece: piece)
            case .failure(let error) where error.reason == "request_too_large" && piece.count > 1:
                // The daemon's limit is below the default: halve the piece and try again.
                let middle = piece.lowerBound + piece.count / 2
                pieces.insert(contentsOf: [piece.lowerBound..<middle, middle..<piece.upperBound], at: 0)
            case .failure(let error) where error.reason == "request_too_large":
                let line = plan.segments[piece].first?.line ?? 1
                tally.rejected.append(.init(line: line, reason: error.reason))
            case .failure(let error):
                reportImport(tally, path: path, context)
                let line = plan.segments[piece].first?.line ?? 1
                throw CommandFailure(description: "contacts import: \(error.message) (\(error.reason)); stopped at line \(line)")
            }
        }
        reportImport(tally, path: path, context)
        return tally.rejectedTotal == 0 ? 0 : 1
    }

    private func reportImport(_ tally: ImportTally, path: String, _ context: VerbContext) {
        if context.json != nil {
            context.printJSON(tally.json)
            return
        }
        printLine("added \(tally.added), skipped \(tally.skipped), rejected \(tally.rejectedTotal)")
        let name = path == "-" ? "<stdin>" : path
        for rejection in tally.rejected.sorted(by: { $0.line < $1.line }) {
            writeError("\(name):\(rejection.line): \(rejection.reason) (\(describeImportReason(rejection.reason)))")
        }
        if tally.unlisted > 0 { writeError("\(name): \(tally.unlisted) more rejected, not listed by rosterd") }
    }

    /// The whole file (or stdin for `-`), which must be UTF-8 text: the daemon takes nothing else.
    private func readImportFile(_ path: String, verb: String) throws(CommandFailure) -> [UInt8] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure(description: "\(verb): cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var content: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw CommandFailure(description: "\(verb): cannot read \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            content += chunk[..<count]
        }
        guard String(validating: content, as: UTF8.self) != nil else {
            throw CommandFailure(description: "\(verb): \(path) is not UTF-8 text")
        }
        return content
    }
}
