import RosterCore
import RosterRuntime
import RosterProtocol

/// The contacts form on the loop: its throttle machine's timer is a loop timer, and each search it asks for
/// runs against the user's index at once and goes out as a `results` event.
///
/// A peer that does not read costs one owed refresh, not a search per change: while its socket refuses output,
/// a search the machine asks for is skipped and remembered, and once the peer has read everything the latest
/// query is searched again, as a change to the list (issue 12: 300 such forms, each searched and encoded on every
/// change only to be coalesced away, cut a writer from 1,377 adds/s to 2/s).
final class ContactsFormRunner: OpenForm {
    /// How many contacts a `results` event carries; `total` says how many matched in all.
    static let pageSize = 50

    private var machine: ContactsForm
    private unowned let server: Server
    private unowned let connection: Connection
    private let userID: Int64
    private var timer: Scheduled?
    private var pending: [ContactsFormAction] = []
    /// A search was skipped while the peer was behind; it is run once the peer catches up.
    private var resultsOwed = false

    init(throttle: Duration, userID: Int64, server: Server, connection: Connection) {
        self.machine = ContactsForm(throttle: throttle)
        self.userID = userID
        self.server = server
        self.connection = connection
    }

    var snapshot: FormSnapshot {
        FormSnapshot(form: .contacts, fields: [
            FieldSnapshot(name: .query, enabled: true, state: machine.query.isEmpty ? .empty : .valid,
                          code: machine.query.isEmpty ? .empty : .entered, rev: machine.rev),
        ], submittable: false)
    }

    /// The first results (the whole list) go out right after the `form.open` answer.
    func opened() {
        perform(machine.opened(now: server.loop.now))
    }

    func input(field: FieldName, value: String) throws(RosterError) -> Int {
        guard field == .query else { throw .unknownField(form: FormName.contacts.rawValue, field: field.rawValue) }
        machine.throttle = connection.session.throttle(under: server.config.policy)
        let (rev, actions) = machine.queryReceived(value, now: server.loop.now)
        pending += actions
        return rev
    }

    func performPendingInput() {
        let actions = pending
        pending = []
        perform(actions)
    }

    /// The contacts form has nothing to submit; its results stream as you type.
    func submit(_ call: Call) {
        call.fail(.notSubmittable(form: FormName.contacts.rawValue))
    }

    func close() {
        _ = machine.closed()
        resultsOwed = false
        timer?.cancel()
        timer = nil
    }

    func policyChanged(_ policy: Policy) {}

    func accountRegistered(username: String, email: String?) {}

    /// Someone changed this user's contacts: fresh results, within the throttle.
    func contactsChanged() {
        perform(machine.contactsChanged(now: server.loop.now))
    }

    var ownerID: Int64 { userID }

    /// The peer read all its output: results skipped meanwhile are searched now, within the throttle.
    func outputDrained() {
        guard resultsOwed else { return }
        resultsOwed = false
        perform(machine.contactsChanged(now: server.loop.now))
    }

    private func perform(_ actions: [ContactsFormAction]) {
        for action in actions {
            switch action {
            case .search(let query, _):
                pushResults(for: query)
            case .schedule(let deadline):
                timer?.cancel()
                timer = server.loop.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    self.timer = nil
                    self.perform(self.machine.timerFired(now: self.server.loop.now))
                }
            case .cancelTimer:
                timer?.cancel()
                timer = nil
            }
        }
    }

    private func pushResults(for query: String) {
        guard !connection.peerIsBehind else {
            resultsOwed = true
            return
        }
        do {
            let page = try server.contacts.search(userID: userID, query: query, limit: Self.pageSize, offset: 0)
            server.sendEvent("results", [
                ("form", .string(FormName.contacts.rawValue)), ("query", .string(query)),
                ("items", .array(page.items.map(ContactJSON.encode))), ("total", .int(page.total)),
            ], to: connection, coalescing: "results:contacts")
        } catch {
            server.logger.error("contacts search failed: \(error)")
        }
    }
}

/// A contact as the wire shows it: every field present, null when empty.
enum ContactJSON {
    static func encode(_ contact: Contact) -> JSONValue {
        .object([
            ("id", .int(contact.id)), ("name", .string(contact.name)), ("phone", .optional(contact.phone)),
            ("email", .optional(contact.email)), ("note", .optional(contact.note)),
            ("created_at", .int(contact.createdAt)), ("updated_at", .int(contact.updatedAt)),
        ])
    }
}
