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

/// Binds the contacts form machine (`ContactsForm`, whose file holds its rules: the throttle, stale answers, the
/// retry after `busy`, the refresh owed to a peer that did not read) to its environment: its timers on the
/// scheduler, each search read from the user's index and storage (later: the index may be loading, the rows
/// are read), and the answers fed back through a `MachineDriver`.
///
/// The runner decides nothing: it performs the machine's actions. A newer search calls the older one's read
/// off if it has not started; a closed form stops its driver, so it pushes nothing, and calls its read off.
final class ContactsFormRunner: RunningForm {
    /// How many contacts a `results` event carries; `total` says how many matched in all.
    static let pageSize = 50

    private enum Fact {
        case contactsChanged
        case outputDrained
        case timerFired(ContactsFormTimer)
        case searchAnswered(token: UInt64, Result<ContactsPage, RosterError>)
        case peerWasBehind
    }

    let ownerID: AccountID
    private var machine: ContactsForm
    private let environment: ContactsFormEnvironment
    private lazy var driver: MachineDriver<Fact, ContactsFormAction> = {
        let driver = MachineDriver<Fact, ContactsFormAction> { [unowned self] fact in self.step(fact) }
        driver.perform = { [unowned self] action, _ in self.perform(action) }
        return driver
    }()
    private let timers: KeyedTimers<ContactsFormTimer>
    /// What an input returned, performed once its answer went out.
    private var pending: [ContactsFormAction] = []
    /// Set to call off the read of the search out, if any.
    private var searchOut: Locked<Bool>?

    init(userID: AccountID, environment: ContactsFormEnvironment) {
        self.ownerID = userID
        self.environment = environment
        self.machine = ContactsForm(throttle: environment.throttle())
        self.timers = KeyedTimers(on: environment.scheduler)
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
        driver.perform(machine.opened(now: now))
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
        driver.perform(actions)
    }

    /// The contacts form has nothing to submit; its results stream as you type.
    func submit(answer: @escaping (Result<JSONValue, RosterError>) -> Void) {
        answer(.failure(.notSubmittable(form: FormName.contacts.rawValue)))
    }

    /// The machine forgets what it owed and the driver stops; the runner releases every timer and the read it
    /// holds itself, so the machine's own cancels are not needed.
    func close() {
        _ = machine.closed()
        driver.stop()
        pending = []
        cancelSearchOut()
        timers.cancelAll()
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
        driver.feed(.contactsChanged)
    }

    /// The peer read all its output: results skipped meanwhile are searched now, within the throttle.
    func outputDrained() {
        driver.feed(.outputDrained)
    }

    // MARK: Facts in

    private func step(_ fact: Fact) -> [ContactsFormAction] {
        let now = now
        switch fact {
        case .contactsChanged: return machine.contactsChanged(now: now)
        case .outputDrained: return machine.outputDrained(now: now)
        case .timerFired(let timer): return machine.timerFired(timer, now: now)
        case .searchAnswered(let token, let result): return machine.searchAnswered(token: token, result, now: now)
        case .peerWasBehind: return machine.peerWasBehind()
        }
    }

    // MARK: Actions out

    private func perform(_ action: ContactsFormAction) {
        switch action {
        case .search(let query, let token):
            search(query, token: token)
        case .showResults(let query, let page):
            environment.sink.results(query: query, items: page.items, total: page.total)
        case .reportFailure(let error):
            environment.logger.error("contacts search failed: \(error)")
        case .schedule(let timer, let deadline):
            timers.set(timer, at: deadline) { [weak self] in self?.driver.feed(.timerFired(timer)) }
        case .cancelTimer(let timer):
            timers.cancel(timer)
        }
    }

    private func search(_ query: String, token: UInt64) {
        // Whatever the older search would have pushed is stale now.
        cancelSearchOut()
        guard !environment.sink.peerIsBehind else { return driver.feed(.peerWasBehind) }
        let cancelled = Locked(false)
        searchOut = cancelled
        environment.contacts.page(userID: ownerID, query: query, limit: Self.pageSize, offset: 0,
                                  charge: environment.charge, cancelled: cancelled) { [weak self] result in
            guard let self else { return }
            // The read is over: there is nothing left to call off.
            if searchOut === cancelled { searchOut = nil }
            driver.feed(.searchAnswered(token: token, result.map { ContactsPage(items: $0.items, total: $0.total) }))
        }
    }

    private func cancelSearchOut() {
        searchOut?.withLock { $0 = true }
        searchOut = nil
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
            ("id", .int(contact.id)), ("uid", .string(contact.uid)), ("etag", .string(contact.etag)),
            ("name", .string(contact.name)), ("phone", .optional(contact.phone)),
            ("email", .optional(contact.email)), ("note", .optional(contact.note)),
            ("created_at", .int(contact.createdAt)), ("updated_at", .int(contact.updatedAt)),
        ]
    }
}
