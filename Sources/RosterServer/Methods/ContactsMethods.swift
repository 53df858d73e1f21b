import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// A call's connection as the contacts methods see it: also whether it closed meanwhile (work queued for it then
/// skips itself) and the largest answer it takes.
protocol ContactsCallHost: CallHost {
    var closedFlag: Locked<Bool> { get }
    var maxAnswerBytes: Int { get }
}

/// The output all connections hold, which a big contacts answer must not add to while it is spent.
protocol OutputBudgetWatch: AnyObject {
    associatedtype Host: ContactsCallHost
    /// Read at each use: a reload's log level reaches the methods' lines at once.
    var logger: Logger { get }
    /// Whether all connections together, or those of `uid`, hold as much unsent output as they may.
    func isOutputBudgetSpent(uid: UInt32) -> Bool
    /// A write found the token `hash` gone where it ran: every session bound to it ends.
    func sessionFoundEnded(_ hash: [UInt8])
}

/// How much a contacts answer may hold, and how it waits when it cannot.
enum ContactsLimits {
    static let pageRange: ClosedRange<Int64> = 1...1_000
    static let offsetRange: ClosedRange<Int64> = 0...Int64(Int32.max)
    static let exportPageRange: ClosedRange<Int64> = 1...10_000
    static let exportPageDefault = 1_000
    /// An export page's answer line stays under this (and under half the largest answer the connection takes).
    static let exportPageBytes = 1 << 20
    /// A page of more contacts than this is a big answer: built on a worker, and refused `busy` while the output
    /// budget is spent.
    static let bigPage = 100
    /// What a contact is reckoned to take in an answer until the answer is built (most take 100–200 bytes).
    static let contactBytesEstimate = 256
    static let bigAnswerRetryMs: Int64 = 250
    /// An import's answer lists at most this many rejections; `errors_total` counts them all (1.3M
    /// rejections once made a 54 MB answer, which the connection's output limit then dropped).
    static let importErrorsListed = 100
    static let changesRange: ClosedRange<Int64> = 1...10_000
    static let changesDefault = 1_000
    static let cardsPerRequest = 1...1_000
}

/// `contacts.*`: a logged-in user's own address book. Another user's id reads as `not_found`, never `forbidden`.
final class ContactsMethods<Output: OutputBudgetWatch> {
    typealias ContactsCall = RequestCall<Output.Host>

    private let contacts: ContactsService
    private unowned let output: Output
    private var logger: Logger { output.logger }

    init(contacts: ContactsService, output: Output) {
        self.contacts = contacts
        self.output = output
    }

    /// The logged-in user's id, or `unauthenticated`.
    private func owner(_ call: ContactsCall) -> Int64? { call.loggedInUser()?.id }

    /// The logged-in user's id and the grant their writes carry, or `unauthenticated`.
    private func writer(_ call: ContactsCall) -> (Int64, SessionGrant)? {
        guard let userID = owner(call) else { return nil }
        guard let grant = call.session.grant else {
            call.fail(.unauthenticated)
            return nil
        }
        return (userID, grant)
    }

    /// A write found its session ended where it ran: a revocation the loop has not heard of yet (another daemon's,
    /// or a token purged as expired) ends the sessions bound to the token here too, so the client hears it.
    private func answer<T>(_ call: ContactsCall, _ grant: SessionGrant, _ result: Result<T, RosterError>,
                           _ encode: (T) -> JSONValue) {
        if case .failure(.unauthenticated) = result, !grant.isEnded, let hash = grant.tokenHash { output.sessionFoundEnded(hash) }
        call.finish(result.map(encode))
        call.session.writeEnded()
    }

    func list(_ call: ContactsCall) { page(call, query: "") }

    func search(_ call: ContactsCall) { page(call, query: call.params.string("query") ?? "") }

    /// The first page of a user whose index is not loaded yet waits for it to load off the loop; meanwhile every
    /// other request, of this connection or another, is served.
    private func page(_ call: ContactsCall, query: String) {
        guard let userID = owner(call) else { return }
        let limit = Int(call.params.int("limit") ?? 50)
        let offset = Int(call.params.int("offset") ?? 0)
        if limit > ContactsLimits.bigPage { return bigPage(call, userID: userID, query: query, limit: limit, offset: offset) }
        contacts.page(userID: userID, query: query, limit: limit, offset: offset, charge: call.connection.queueCharge,
                      cancelled: call.connection.closedFlag) { result in
            call.finish(result.map { page in
                ["items": .array(page.items.map(ContactJSON.encode)), "total": .int(page.total)]
            })
        }
    }

    private func bigPage(_ call: ContactsCall, userID: Int64, query: String, limit: Int, offset: Int) {
        if deferBigAnswer(call) { return }
        let charge = call.connection.queueCharge
        contacts.pageIDs(userID: userID, query: query, limit: limit, offset: offset, charge: charge) { [contacts] result in
            switch result {
            case .failure(let error):
                call.fail(error)
            case .success(let page):
                call.reserveOutput(page.ids.count * ContactsLimits.contactBytesEstimate)
                contacts.pageLine(userID: userID, page: page, query: query, id: call.id ?? .null, charge: charge,
                                  cancelled: call.connection.closedFlag) { line in call.finish(line: line) }
            }
        }
    }

    /// While the output budget is spent, a request for a big answer waits: `busy`, and true.
    private func deferBigAnswer(_ call: ContactsCall) -> Bool {
        guard output.isOutputBudgetSpent(uid: call.peer.uid) else { return false }
        call.fail(.busy(retryAfterMs: ContactsLimits.bigAnswerRetryMs))
        return true
    }

    func add(_ call: ContactsCall) {
        guard let (userID, grant) = writer(call) else { return }
        let draft = ContactDraft(name: call.params.string("name") ?? "", phone: call.params.string("phone"),
                                 email: call.params.string("email"), note: call.params.string("note"))
        call.session.writeStarted()
        contacts.add(userID: userID, grant: grant, draft, charge: call.connection.queueCharge) { [self] result in
            answer(call, grant, result) { ["contact": ContactJSON.encode($0)] }
        }
    }

    func update(_ call: ContactsCall) {
        guard let (userID, grant) = writer(call) else { return }
        let patch = ContactPatch(name: call.params.string("name"), phone: call.params.string("phone"),
                                 email: call.params.string("email"), note: call.params.string("note"))
        call.session.writeStarted()
        contacts.update(userID: userID, grant: grant, id: call.params.int("id") ?? 0, patch,
                        charge: call.connection.queueCharge) { [self] result in
            answer(call, grant, result) { ["contact": ContactJSON.encode($0)] }
        }
    }

    func remove(_ call: ContactsCall) {
        if call.params.string("uid") != nil || call.params.string("if_match") != nil { return removeCard(call) }
        guard call.params.int("id") != nil else { return call.fail(.invalidParams(param: "id", problem: .missing)) }
        guard let (userID, grant) = writer(call) else { return }
        call.session.writeStarted()
        contacts.remove(userID: userID, grant: grant, id: call.params.int("id") ?? 0,
                        charge: call.connection.queueCharge) { [self] result in
            answer(call, grant, result) { _ in [:] }
        }
    }

    /// `contacts.remove {uid, if_match?}`: by uid, with the etag it must still have.
    private func removeCard(_ call: ContactsCall) {
        guard call.params.int("id") == nil else { return call.fail(.invalidParams(param: "id", problem: .unknown)) }
        let uid: String
        do { uid = try call.params.contactUID() } catch { return call.fail(error) }
        guard let (userID, grant) = writer(call) else { return }
        let precondition: CardPrecondition = call.params.string("if_match").map(CardPrecondition.ifMatch) ?? .none
        call.session.writeStarted()
        contacts.removeCard(userID: userID, grant: grant, uid: uid, precondition: precondition,
                            charge: call.connection.queueCharge) { [self] result in
            answer(call, grant, result) { _ in [:] }
        }
    }

    /// `contacts.changes {since?, limit?}`: what changed after a token, or every contact without one.
    func changes(_ call: ContactsCall) {
        guard let userID = owner(call) else { return }
        var since: Int64?
        if let token = call.params.string("since") {
            guard let revision = ContactRevision.revision(token: token) else {
                return call.fail(.invalidParams(param: "since", problem: .invalidToken))
            }
            since = revision
        }
        let limit = Int(call.params.int("limit") ?? Int64(ContactsLimits.changesDefault))
        if limit > ContactsLimits.bigPage, deferBigAnswer(call) { return }
        contacts.changes(userID: userID, since: since, limit: limit, charge: call.connection.queueCharge) { result in
            call.finish(result.flatMap { read -> Result<JSONValue, RosterError> in
                switch read {
                case .expired: return .failure(.invalidParams(param: "since", problem: .tokenExpired))
                case .changes(let changes):
                    return .success(["token": .string(ContactRevision.token(changes.revision)),
                                     "changed": .array(changes.changed.map(ContactJSON.encode)),
                                     "removed": .array(changes.removed.map(JSONValue.string)),
                                     "more": .bool(changes.more)])
                }
            })
        }
    }

    /// `contacts.get_vcard {uid}` → `{vcard, etag}`.
    func getCard(_ call: ContactsCall) {
        guard let userID = owner(call) else { return }
        let uid: String
        do { uid = try call.params.contactUID() } catch { return call.fail(error) }
        contacts.cards(userID: userID, uids: [uid], byteLimit: call.connection.maxAnswerBytes,
                       charge: call.connection.queueCharge) { result in
            call.finish(result.flatMap { read in
                guard let card = read.cards.first else { return .failure(.notFound) }
                return .success(["vcard": .string(card.text), "etag": .string(card.contact.etag)])
            })
        }
    }

    /// `contacts.get_vcards {uids}` → `{items: [{uid, vcard, etag}], missing, unread}`: as many cards as fit an
    /// export page's bytes; `unread` (ext) are the uids to ask for again.
    func getCards(_ call: ContactsCall) {
        guard let userID = owner(call) else { return }
        let uids = call.params["uids"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard ContactsLimits.cardsPerRequest.contains(uids.count) else {
            return call.fail(.invalidParams(param: "uids", problem: .outOfRange))
        }
        guard uids.allSatisfy(ContactUID.isValid) else { return call.fail(.invalidParams(param: "uids", problem: .invalidUID)) }
        if deferBigAnswer(call) { return }
        let byteLimit = min(ContactsLimits.exportPageBytes, call.connection.maxAnswerBytes / 2)
        call.reserveOutput(byteLimit)
        contacts.cards(userID: userID, uids: uids, byteLimit: byteLimit, charge: call.connection.queueCharge) { result in
            call.finish(result.map { read in
                let found = Set(read.cards.map(\.contact.uid))
                let unread = Set(read.unread)
                return [
                    "items": .array(read.cards.map { card in
                        ["uid": .string(card.contact.uid), "vcard": .string(card.text), "etag": .string(card.contact.etag)]
                    }),
                    "missing": .array(uids.filter { !found.contains($0) && !unread.contains($0) }.map(JSONValue.string)),
                    "unread": .array(read.unread.map(JSONValue.string)),
                ]
            })
        }
    }

    /// `contacts.put_vcard {uid, vcard, if_match?, if_none_match?}` → `{etag, created}`.
    func putCard(_ call: ContactsCall) {
        let uid: String
        do { uid = try call.params.contactUID() } catch { return call.fail(error) }
        let card = call.params.string("vcard") ?? ""
        guard card.utf8.count <= VCard.maxCardBytes else {
            return call.fail(.invalidParams(param: "vcard", problem: .cardTooLarge))
        }
        let precondition: CardPrecondition
        switch (call.params.string("if_match"), call.params.string("if_none_match")) {
        case (let etag?, nil): precondition = .ifMatch(etag)
        case (nil, "*"): precondition = .ifNoneMatch
        case (nil, nil): precondition = .none
        case (nil, _?): return call.fail(.invalidParams(param: "if_none_match", problem: .outOfRange))
        case (_?, _?): return call.fail(.invalidParams(param: "if_none_match", problem: .unknown))
        }
        guard let (userID, grant) = writer(call) else { return }
        call.session.writeStarted()
        contacts.putCard(userID: userID, grant: grant, uid: uid, card: card, precondition: precondition,
                         charge: call.connection.queueCharge) { [self] result in
            let answered = result.flatMap { put -> Result<(String, Bool), RosterError> in
                switch put {
                case .created(let stored): .success((stored.contact.etag, true))
                case .updated(let stored): .success((stored.contact.etag, false))
                case .preconditionFailed: .failure(.preconditionFailed)
                case .invalid(let error): .failure(.invalidParams(param: "vcard", problem: error.problem))
                }
            }
            answer(call, grant, answered) { ["etag": .string($0.0), "created": .bool($0.1)] }
        }
    }

    /// Every path answers the call: each refusal before the storage is asked fails it, and the storage answers
    /// once whatever happens (a budget, a failure, a closed connection).
    func importContacts(_ call: ContactsCall) {
        guard let (userID, grant) = writer(call) else { return }
        let format: ContactFormat
        do { format = try call.params.contactFormat() } catch { return call.fail(error) }
        let username = call.session.user?.username ?? ""
        call.session.writeStarted()
        contacts.importContacts(userID: userID, grant: grant, format: format, data: call.params.string("data") ?? "",
                                charge: call.connection.queueCharge) { [self] result in
            if case .success(let outcome) = result {
                logger.info("contacts imported: \(outcome.added.count) added, \(outcome.skipped) skipped, \(outcome.errors.count) rejected",
                            [("ROSTER_USER", username), ("ROSTER_EVENT", "contacts_import")])
            }
            answer(call, grant, result, Self.importAnswer)
        }
    }

    /// At most `importErrorsListed` rejections, and how many there were in all.
    private static func importAnswer(_ outcome: ContactImportOutcome) -> JSONValue {
        [
            "added": .int(outcome.added.count), "skipped": .int(outcome.skipped),
            "errors": .array(outcome.errors.prefix(ContactsLimits.importErrorsListed).map {
                ["line": .int($0.line), "reason": .string($0.reason)]
            }),
            "errors_total": .int(outcome.errors.count),
        ]
    }

    /// Without `limit` or `cursor`, the whole book in one answer if it fits (`answer_too_large` otherwise, so a
    /// client that knows nothing of pages never takes a part for the whole); with either, one page of it. Every
    /// path answers the call, as for an import.
    func export(_ call: ContactsCall) {
        guard let userID = owner(call) else { return }
        let request: ContactExportRequest
        do {
            request = try ContactExportRequest(call.params, maxAnswerBytes: call.connection.maxAnswerBytes)
        } catch {
            return call.fail(error)
        }
        if deferBigAnswer(call) { return }
        call.reserveOutput(request.byteLimit)
        contacts.export(userID: userID, after: request.after, into: request.writer(id: call.id ?? .null),
                        charge: call.connection.queueCharge, cancelled: call.connection.closedFlag) { result in
            call.finish(line: result)
        }
    }
}

extension Params {
    /// The `uid` param, refused `invalid_uid` where `ContactUID` refuses it.
    func contactUID() throws(RosterError) -> String {
        guard let uid = string("uid") else { throw .invalidParams(param: "uid", problem: .missing) }
        guard ContactUID.isValid(uid) else { throw .invalidParams(param: "uid", problem: .invalidUID) }
        return uid
    }

    /// The `format` param, which the spec already limited to the two formats.
    func contactFormat() throws(RosterError) -> ContactFormat {
        guard let format = ContactFormat(rawValue: string("format") ?? "") else {
            throw .invalidParams(param: "format", problem: .outOfRange)
        }
        return format
    }
}

extension Connection: ContactsCallHost {
    var maxAnswerBytes: Int { settings.maxAnswerBytes }
}

/// The daemon's contacts methods: the output budget of its connections, and their sessions.
extension SessionBook: OutputBudgetWatch {}

extension ContactsMethods: MethodGroup {
    typealias Host = Output.Host

    /// The contacts methods' entries of the dispatcher's table; each handler is handed the group when called.
    static var table: [MethodEntry<ContactsMethods>] {
        let paging: [FieldSpec] = [.optional("limit", .integer(ContactsLimits.pageRange)),
                                   .optional("offset", .integer(ContactsLimits.offsetRange))]
        let page = Shape.object([FieldSpec("items", .array(.described("contact"))), FieldSpec("total", .integer(0...Int64.max))])
        let found = Shape.object([FieldSpec("items", .array(.described("contact and match? {field, ranges}"))),
                                  FieldSpec("total", .integer(0...Int64.max))])
        let contactShape = "{id, uid, etag, name, phone, email, note, created_at, updated_at}"
        let contact = Shape.object([FieldSpec("contact", .described(contactShape))])
        let uid = FieldSpec("uid", .string)
        let id = FieldSpec("id", .integer(1...Int64.max))
        let format = FieldSpec("format", .oneOf([ContactFormat.vcard.rawValue, ContactFormat.csv.rawValue]))
        return [
            MethodEntry(spec: MethodSpec("contacts.list", summary: "Your contacts by name, a page at a time (default 50).",
                                    params: paging, result: page), handler: { $0.list($1) }),
            MethodEntry(spec: MethodSpec("contacts.search", summary: "Your contacts matching a query, best first.",
                                    params: [FieldSpec("query", .string)] + paging, result: found), handler: { $0.search($1) }),
            MethodEntry(spec: MethodSpec("contacts.add", summary: "Add a contact; the daemon assigns its id.",
                                    params: [FieldSpec("name", .string), .optional("phone", .string),
                                             .optional("email", .string), .optional("note", .string)],
                                    result: contact), handler: { $0.add($1) }),
            MethodEntry(spec: MethodSpec("contacts.update", summary: "Change some fields of a contact; \"\" clears one.",
                                    params: [id, .optional("name", .string), .optional("phone", .string),
                                             .optional("email", .string), .optional("note", .string)],
                                    result: contact), handler: { $0.update($1) }),
            MethodEntry(spec: MethodSpec("contacts.remove", summary: "Remove a contact by id, or by uid with the etag it must still have.",
                                    params: [.optional("id", .integer(1...Int64.max)), .optional("uid", .string),
                                             .optional("if_match", .string)],
                                    result: .object([])),
                   handler: { $0.remove($1) }),
            MethodEntry(spec: MethodSpec("contacts.changes",
                                    summary: "What changed since a token (removals kept 90 days), or every contact without one.",
                                    params: [.optional("since", .string), .optional("limit", .integer(ContactsLimits.changesRange))],
                                    result: .object([FieldSpec("token", .string),
                                                     FieldSpec("changed", .array(.described(contactShape))),
                                                     FieldSpec("removed", .array(.string)), FieldSpec("more", .boolean)])),
                   handler: { $0.changes($1) }),
            MethodEntry(spec: MethodSpec("contacts.get_vcard", summary: "A contact's card, byte for byte as it was put.",
                                    params: [uid],
                                    result: .object([FieldSpec("vcard", .string), FieldSpec("etag", .string)])),
                   handler: { $0.getCard($1) }),
            MethodEntry(spec: MethodSpec("contacts.get_vcards",
                                    summary: "Up to 1,000 cards by uid, as many as fit an export page; ask again for unread.",
                                    params: [FieldSpec("uids", .array(.string))],
                                    result: .object([FieldSpec("items", .array(.described("{uid, vcard, etag}"))),
                                                     FieldSpec("missing", .array(.string)),
                                                     FieldSpec("unread", .array(.string))])),
                   handler: { $0.getCards($1) }),
            MethodEntry(spec: MethodSpec("contacts.put_vcard",
                                    summary: "Store a vCard 3.0 or 4.0 under a uid as sent; its fields are taken from it.",
                                    params: [uid, FieldSpec("vcard", .string), .optional("if_match", .string),
                                             .optional("if_none_match", .string)],
                                    result: .object([FieldSpec("etag", .string), FieldSpec("created", .boolean)])),
                   handler: { $0.putCard($1) }),
            MethodEntry(spec: MethodSpec("contacts.import", summary: "Add contacts from vCard 4.0 or CSV; the first 100 rejects are listed.",
                                    params: [format, FieldSpec("data", .string)],
                                    result: .object([FieldSpec("added", .integer(0...Int64.max)),
                                                     FieldSpec("skipped", .integer(0...Int64.max)),
                                                     FieldSpec("errors", .array(.described("{line, reason}"))),
                                                     FieldSpec("errors_total", .integer(0...Int64.max))])),
                   handler: { $0.importContacts($1) }),
            MethodEntry(spec: MethodSpec("contacts.export",
                                    summary: "Your contacts as vCard 4.0 or CSV: all at once, or in pages with limit and cursor.",
                                    params: [format, .optional("limit", .integer(ContactsLimits.exportPageRange)),
                                             .optional("cursor", .string)],
                                    result: .object([FieldSpec("data", .string),
                                                     FieldSpec("next_cursor", .described("string or null"))])),
                   handler: { $0.export($1) }),
        ]
    }
}

/// Which part of an address book one `contacts.export` answer carries, from its params.
struct ContactExportRequest: Equatable {
    let format: ContactFormat
    /// The page starts after this contact id; nil starts at the beginning (and a CSV file with its header).
    let after: Int64?
    /// At most this many contacts; nil asks for every one, in one answer, or `answer_too_large`.
    let contactLimit: Int?
    /// The answer line may be at most this long.
    let byteLimit: Int

    init(_ params: Params, maxAnswerBytes: Int) throws(RosterError) {
        format = try params.contactFormat()
        let cursor = params.string("cursor")
        let limit = params.int("limit")
        if let cursor {
            guard let decoded = ContactExportCursor.decode(cursor) else {
                throw .invalidParams(param: "cursor", problem: .outOfRange)
            }
            after = decoded
        } else {
            after = nil
        }
        let paged = cursor != nil || limit != nil
        contactLimit = paged ? Int(limit ?? Int64(ContactsLimits.exportPageDefault)) : nil
        byteLimit = paged ? min(ContactsLimits.exportPageBytes, maxAnswerBytes / 2) : maxAnswerBytes
    }

    func writer(id: JSONValue) -> ContactExportWriter {
        ContactExportWriter(id: id, format: format, startsFile: after == nil, byteLimit: byteLimit, contactLimit: contactLimit)
    }
}
