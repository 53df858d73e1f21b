import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// Where a contacts form's results go: in the daemon, the connection it was opened on.
protocol ContactsFormSink: AnyObject {
    /// The socket refused output since the peer last read everything: results now would only be coalesced away.
    var peerIsBehind: Bool { get }
    /// A `results` event: the first page of matches for `query`, and how many matched in all.
    func results(query: String, items: [FoundContact], total: Int)
}

/// What a contacts form needs of the daemon, and nothing more: its clock and timers, the user's contacts, where
/// its events go, and the throttle in force.
struct ContactsFormEnvironment {
    let scheduler: any Scheduler
    let contacts: ContactsService
    let sink: any ContactsFormSink
    /// Read at every input: a `session.hello` override or a reload changes it from the next window on.
    let throttle: () -> Duration
    /// What the form's reads are charged to: its user and its connection.
    let charge: QueueCharge
    let logger: Logger
}

/// The contacts form: its throttle machine's timer on the scheduler, and each search it asks for answered from
/// the user's index and storage, later (the index may be loading, the rows are read), as a `results` event.
///
/// Rules beyond the machine's:
/// - Results are pushed only for the machine's latest search (`ContactsForm.isLatest`): one that answers after a
///   newer search started is dropped, so a stale list never lands after a fresh one; a newer search also cancels
///   the older one's read if it has not started. A closed form pushes nothing and cancels its read.
/// - A peer that does not read costs one owed refresh, not a search per change: while its socket refuses output,
///   a search the machine asks for is skipped and remembered, and once the peer has read everything the latest
///   query is searched again, as a change to the list (issue 12: 300 such forms, each searched and encoded on
///   every change only to be coalesced away, cut a writer from 1,377 adds/s to 2/s).
/// - A search refused `busy` (a storage budget, or too many waiting for the index) is tried again after the hint,
///   as a change to the list, so the last results still answer the latest query.
final class ContactsFormRunner: RunningForm {
    /// How many contacts a `results` event carries; `total` says how many matched in all.
    static let pageSize = 50

    let ownerID: AccountID
    private var machine: ContactsForm
    private let environment: ContactsFormEnvironment
    private var timer: Scheduled?
    private var retry: Scheduled?
    private var pending: [ContactsFormAction] = []
    /// A search was skipped while the peer was behind; it is run once the peer catches up.
    private var resultsOwed = false
    /// Set to cancel the read of the search out, if any.
    private var searchOut: Locked<Bool>?
    private var isClosed = false

    init(userID: AccountID, environment: ContactsFormEnvironment) {
        self.ownerID = userID
        self.environment = environment
        self.machine = ContactsForm(throttle: environment.throttle())
    }

    private var now: Instant { environment.scheduler.now }

    var snapshot: FormSnapshot {
        FormSnapshot(form: .contacts, fields: [
            FieldSnapshot(name: .query, enabled: true, state: machine.query.isEmpty ? .empty : .valid,
                          code: machine.query.isEmpty ? .empty : .entered, rev: machine.rev),
        ], submittable: false)
    }

    /// The first results (the whole list) go out once read, after the `form.open` answer.
    func opened() {
        perform(machine.opened(now: now))
    }

    func input(field: FieldName, value: String) throws(RosterError) -> Int {
        guard field == .query else { throw .unknownField(form: FormName.contacts.rawValue, field: field.rawValue) }
        machine.throttle = environment.throttle()
        let (rev, actions) = machine.queryReceived(value, now: now)
        pending += actions
        return rev
    }

    func performPendingInput() {
        let actions = pending
        pending = []
        perform(actions)
    }

    /// The contacts form has nothing to submit; its results stream as you type.
    func submit(answer: @escaping (Result<JSONValue, RosterError>) -> Void) {
        answer(.failure(.notSubmittable(form: FormName.contacts.rawValue)))
    }

    func close() {
        isClosed = true
        _ = machine.closed()
        resultsOwed = false
        pending = []
        cancelSearchOut()
        timer?.cancel()
        timer = nil
        retry?.cancel()
        retry = nil
    }

    func policyChanged(_ policy: Policy) {}

    func accountRegistered(username: String, email: String?) {}

    /// Changes that may have been missed may include this user's contacts; a deleted account ends the session,
    /// and with it this form.
    func storeChanged(_ change: StoreChange) {
        switch change {
        case .anything: contactsChanged()
        case .accountRemoved: break
        }
    }

    /// Someone changed this user's contacts: fresh results, within the throttle.
    func contactsChanged() {
        guard !isClosed else { return }
        perform(machine.contactsChanged(now: now))
    }

    /// The peer read all its output: results skipped meanwhile are searched now, within the throttle.
    func outputDrained() {
        guard resultsOwed, !isClosed else { return }
        resultsOwed = false
        perform(machine.contactsChanged(now: now))
    }

    private func perform(_ actions: [ContactsFormAction]) {
        for action in actions {
            switch action {
            case .search(let query, let token):
                search(query, token: token)
            case .schedule(let deadline):
                timer?.cancel()
                timer = environment.scheduler.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    self.timer = nil
                    self.perform(self.machine.timerFired(now: self.now))
                }
            case .cancelTimer:
                timer?.cancel()
                timer = nil
            }
        }
    }

    private func search(_ query: String, token: UInt64) {
        // Whatever the older search would have pushed is stale now.
        cancelSearchOut()
        guard !environment.sink.peerIsBehind else {
            resultsOwed = true
            return
        }
        let cancelled = Locked(false)
        searchOut = cancelled
        environment.contacts.page(userID: ownerID, query: query, limit: Self.pageSize, offset: 0,
                                  charge: environment.charge, cancelled: cancelled) { [weak self] result in
            self?.searchAnswered(query: query, token: token, result)
        }
    }

    private func searchAnswered(query: String, token: UInt64, _ result: Result<(items: [FoundContact], total: Int), RosterError>) {
        guard !isClosed, machine.isLatest(token) else { return }
        searchOut = nil
        switch result {
        case .success(let page):
            environment.sink.results(query: query, items: page.items, total: page.total)
        case .failure(.busy(let retryAfterMs)):
            retry?.cancel()
            retry = environment.scheduler.schedule(at: now + .milliseconds(max(1, retryAfterMs))) { [weak self] in
                guard let self else { return }
                self.retry = nil
                self.contactsChanged()
            }
        case .failure(let error):
            environment.logger.error("contacts search failed: \(error)")
        }
    }

    private func cancelSearchOut() {
        searchOut?.withLock { $0 = true }
        searchOut = nil
    }
}

/// A contact in a page of search results, with what of it the query matched (nil: nothing to mark).
struct FoundContact {
    let contact: Contact
    let match: ContactMatch?

    /// `keys` are those the index holds for the contact; without them (the list, or a contact gone from the
    /// index meanwhile) there is no match to describe.
    init(_ contact: Contact, query: String, keys: ContactSearchKeys?) {
        self.contact = contact
        match = keys.flatMap { ContactMatch.describe(query: query, name: contact.name, phone: contact.phone, keys: $0) }
    }
}

/// A contact as the wire shows it: every field present, null when empty.
enum ContactJSON {
    static func encode(_ contact: Contact) -> JSONValue {
        .object(fields(contact))
    }

    /// A found contact: as `encode`, and for a query that marks part of it, `match` (protocol.md "contacts.search"):
    /// `{"field": "name" | "phone", "ranges": [[start, length], …]}` in UTF-16 code units of that field.
    static func encode(_ found: FoundContact) -> JSONValue {
        guard let match = found.match else { return encode(found.contact) }
        let ranges = match.ranges.map { JSONValue.array([.int(Int64($0.lowerBound)), .int(Int64($0.count))]) }
        return .object(fields(found.contact) + [("match", .object([("field", .string(match.field.rawValue)),
                                                                   ("ranges", .array(ranges))]))])
    }

    private static func fields(_ contact: Contact) -> [(String, JSONValue)] {
        [
            ("id", .int(contact.id)), ("name", .string(contact.name)), ("phone", .optional(contact.phone)),
            ("email", .optional(contact.email)), ("note", .optional(contact.note)),
            ("created_at", .int(contact.createdAt)), ("updated_at", .int(contact.updatedAt)),
        ]
    }
}
