import CLinux
import Glibc
import RosterCore
import RosterCrypto
import RosterRuntime
import RosterProtocol
import RosterStorage

/// The daemon's runtime: accepts connections, frames and dispatches requests, and shuts down cleanly.
/// Everything here runs on the loop thread.
public final class Server {
    /// Counters for `admin.stats` and the status line.
    struct Stats {
        var requestsServed = 0
        var eventsSent = 0
        var connectionsAccepted = 0
    }

    let loop: EventLoop
    public var logger: Logger
    /// The configuration in force; a reload replaces it, and new input and new connections follow it.
    public var config: DaemonConfig {
        didSet { configChanged() }
    }
    /// Everything the daemon keeps, behind the storage protocols; only the composition root names a backend.
    let storage: any Storage
    /// Argon2id and libpwquality, off the loop.
    let passwords: PasswordLanes
    let accounts: AccountProcedures
    let contacts: ContactsService
    /// `users.*`, `auth.login` and `session.resume`, given the account procedures and this server's sessions.
    private(set) lazy var accountMethods = AccountMethods(accounts: accounts, sessions: self)
    /// `account.*`, `session.list/revoke/revoke_others` and `auth.recover`, given the account procedures and this
    /// server's sessions.
    private(set) lazy var accountLifeMethods = AccountLifeMethods(accounts: accounts, sessions: self)
    /// `session.*` and `rpc.describe`, given the account procedures (a log-out revokes) and this server's sessions.
    private(set) lazy var sessionMethods = SessionMethods(accounts: accounts, sessions: self)
    /// `contacts.*`, given the contacts service and this server's output budget.
    private(set) lazy var contactsMethods = ContactsMethods(contacts: contacts, output: self)
    /// `form.*`, given the loop as scheduler, the account procedures, the contacts and this server's connections.
    /// `admin.*`, given the storage's maintenance and this server's figures.
    private(set) lazy var adminMethods = AdminMethods(storage: storage, figures: self)
    /// `admin.users.*`, given the account procedures and this server's sessions.
    private(set) lazy var adminUsersMethods = AdminUsersMethods(accounts: accounts, sessions: self)
    /// `admin.audit` and its followers, given the storage's log, the account procedures and this server.
    private(set) lazy var adminAuditMethods = AdminAuditMethods(storage: storage, accounts: accounts, desk: self)
    private(set) lazy var formMethods = FormMethods(scheduler: formScheduler, accounts: accounts, contacts: contacts,
                                                    forms: self)
    /// The forms' clock and timers: the loop, or a manual clock in a test of what forms do across the server.
    let formScheduler: any Scheduler
    /// The storage's connection state as last reported, for `admin.stats` and the status line.
    var storageState: StorageState
    /// Where the status line goes, once housekeeping started.
    var statusNotifier: SystemdNotifier?
    var stats = Stats()
    let startedAt: Instant
    /// The wall clock stored times are read against (what the audit log's retention counts back from).
    let wallClock: any WallClock
    /// Shared by every connection: reads happen one at a time on this thread, so one buffer serves all. A
    /// read's lines are served straight from it before the next read (see `LineFramer.feedBorrowing`).
    let readBuffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 65_536)
    private var listener: UnixListener?
    private var listenerRegistration: EventLoop.RegistrationID?
    private(set) var connections: [UInt64: Connection] = [:]
    private var connectionsPerUID: [UInt32: Int] = [:]
    private var nextConnectionID: UInt64 = 1
    private var methods: [String: Method] = [:]
    var plainAnswers = PlainAnswers()
    var revocations = RevocationsDuringResumes()
    /// The bytes of every connection's held requests (see `HeldRequests`).
    var heldRequestBytes = 0
    /// Unsent output of every connection, in total and per peer uid.
    private(set) var outputBudget = OutputBudget()
    private var memoryTrim = MemoryTrimPolicy()
    private(set) var isStopping = false
    private var onStopped: (() -> Void)?
    let daemonUID = getuid()
    /// `[Server] GatewayUsers=` as uids, resolved by the daemon at start and at each reload (a name is looked up
    /// in the user database, which is I/O, so the server is handed the answer).
    public var gatewayUIDs: Set<UInt32> = []

    init(loop: EventLoop, config: DaemonConfig, storage: any Storage, passwords: PasswordLanes,
         contacts: ContactsService, logger: Logger, secrets: AccountSecrets, clock: any WallClock = SystemWallClock(),
         formScheduler: (any Scheduler)? = nil) {
        self.loop = loop
        self.formScheduler = formScheduler ?? loop
        self.storageState = storage.state
        self.config = config
        self.storage = storage
        self.passwords = passwords
        self.accounts = AccountProcedures(storage: storage, passwords: passwords, policy: config.policy, logger: logger,
                                          secrets: secrets, clock: clock, audit: config.audit)
        self.contacts = contacts
        self.logger = logger
        self.startedAt = loop.now
        self.wallClock = clock
        for method in SessionMethods.table + AdminMethods.table + AdminUsersMethods.table + AdminAuditMethods.table
            + FormMethods.table + AccountMethods.table
            + AccountLifeMethods.table + ContactsMethods.table {
            methods[method.spec.name] = method
        }
        contacts.onChange = { [unowned self] userID in self.contactsChanged(of: userID) }
        accounts.tokensPushedOut = { [unowned self] hashes in self.tokensRevoked(hashes) }
        listenToStorage()
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Every method's spec, sorted by name, for `rpc.describe`.
    var methodSpecs: [MethodSpec] { methods.values.map(\.spec).sorted { $0.name < $1.name } }

    public var connectionCount: Int { connections.count }

    /// Connections that said `session.hello`.
    var greetedSessionCount: Int { connections.values.reduce(0) { $0 + ($1.session.greeted ? 1 : 0) } }

    // MARK: Accepting

    public func listen(on listener: UnixListener) throws(SystemError) {
        self.listener = listener
        listenerRegistration = try loop.register(fd: listener.fd, events: EPOLLIN.rawValue) { [unowned self] _ in
            self.acceptPending()
        }
    }

    private func acceptPending() {
        guard let listener else { return }
        while true {
            let accepted: IOResult<Int32>
            do {
                accepted = try Syscall.nonBlocking("accept4") {
                    accept4(listener.fd, nil, nil, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                }
            } catch {
                logger.warning("accept failed: \(error)")
                if error.errno == EMFILE || error.errno == ENFILE { pauseAccepting() }
                return
            }
            guard case .done(let fd) = accepted else { return }
            admit(fd)
        }
    }

    /// Out of descriptors, a level-triggered listener would spin; wait a little for some to be freed.
    private func pauseAccepting() {
        guard let listenerRegistration else { return }
        try? loop.modify(listenerRegistration, events: 0)
        loop.schedule(at: loop.now + .milliseconds(100)) { [weak self] in
            guard let self, !self.isStopping, let registration = self.listenerRegistration else { return }
            try? self.loop.modify(registration, events: EPOLLIN.rawValue)
        }
    }

    /// Serves a socket that is already connected (a socketpair in a test harness or the fuzzer) like an accepted one.
    public func serve(connectedSocket fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        admit(fd)
    }

    private func admit(_ fd: Int32) {
        guard let peer = PeerCredentials.of(fd: fd) else {
            close(fd)
            return
        }
        let perUID = connectionsPerUID[peer.uid, default: 0]
        if connections.count >= config.server.maxConnections || perUID >= config.server.maxConnectionsPerUID {
            refuse(fd, limit: connections.count >= config.server.maxConnections
                   ? config.server.maxConnections : config.server.maxConnectionsPerUID)
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let session = Session()
        let connection = Connection(id: id, fd: fd, peer: peer, session: session,
                                    maxLineBytes: config.server.maxLineBytes, settings: config.server, environment: self)
        do {
            try connection.start()
        } catch {
            logger.warning("cannot watch a new connection: \(error)")
            close(fd)
            return
        }
        connections[id] = connection
        connectionsPerUID[peer.uid, default: 0] += 1
        stats.connectionsAccepted += 1
        logger.debug("connection opened", [("ROSTER_CONNECTION", String(id)), ("ROSTER_PEER_UID", String(peer.uid))])
    }

    /// Over a limit: one error line the client can read, then the door closes.
    private func refuse(_ fd: Int32, limit: Int) {
        let line = RPCMessage.error(id: .null, .busy(retryAfterMs: 1_000),
                                    message: MessageCatalog.message(for: .busy(retryAfterMs: 1_000), locale: .default))
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(fd)
        logger.warning("connection refused: limit of \(limit) reached")
    }

    func connectionClosed(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        connection.session.closeAllForms()
        dropHeld(of: connection)
        adminAuditMethods.connectionClosed(connection.id)
        if let user = connection.session.user { releaseIfUnused(user.id) }
        let remaining = connectionsPerUID[connection.peer.uid, default: 1] - 1
        connectionsPerUID[connection.peer.uid] = remaining > 0 ? remaining : nil
        logger.debug("connection closed", [("ROSTER_CONNECTION", String(connection.id))])
        if isStopping && connections.isEmpty { finishStopping() }
    }

    // MARK: Dispatching

    /// Serves one line; the plain shape of a hot request is answered without a copy of the line. Behind a
    /// request that waits for a change of who the session is, every line waits (see `SessionDependence`).
    func dispatch(line: UnsafeBufferPointer<UInt8>, from connection: Connection) {
        guard connection.session.held.isEmpty else { return hold(Array(line), on: connection) }
        // users.check_username is the same whoever the session is, so it need not wait for a log-in.
        if answerPlainRequest(line, from: connection) { return }
        let bytes = Array(line)
        if !serve(bytes, from: connection) { hold(bytes, on: connection) }
    }

    /// Starts the request on `line`, or answers why it cannot be one; false (with nothing done) when it must
    /// wait for a change of who the session is.
    func serve(_ line: [UInt8], from connection: Connection) -> Bool {
        switch RPCRequest.parse(line: line) {
        case .failure(let envelope):
            if envelope.answer { sendError(envelope.error, id: envelope.id, to: connection) }
        case .success(let request):
            guard let method = methods[request.method] else {
                if let id = request.id { sendError(.methodNotFound(method: request.method), id: id, to: connection) }
                return true
            }
            let params: Params
            do {
                params = try Params(validating: request.params, against: method.spec.params)
            } catch {
                if let id = request.id { sendError(error, id: id, to: connection) }
                return true
            }
            if mustWait(method, params: params, on: connection.session) { return false }
            connection.requestStarted()
            method.handler(self)(Call(id: request.id, params: params, connection: connection))
        }
        return true
    }

    func rejectOversizedLine(from connection: Connection) {
        sendError(.requestTooLarge(limit: config.server.maxLineBytes), id: .null, to: connection)
    }

    func sendError(_ error: RosterError, id: JSONValue, to connection: Connection) {
        var arguments: [String: String] = [:]
        if case .invalidField(let field, _) = error, let name = FieldName.wording(param: field) {
            arguments = name.messageArguments(policy: config.policy)
        }
        let message = MessageCatalog.message(for: error, locale: connection.session.locale, arguments: arguments)
        connection.sendReply(RPCMessage.error(id: id, error, message: message))
    }

    func sendEvent(_ type: String, _ members: [(String, JSONValue)], to connection: Connection,
                   coalescing key: OutputQueue.CoalesceKey? = nil) {
        stats.eventsSent += 1
        connection.sendEvent(RPCMessage.event(type: type, members), coalescing: key)
    }

    // MARK: Output budget

    /// A connection's queue grew or shrank by `delta` bytes.
    func outputQueuedChanged(uid: UInt32, by delta: Int) {
        outputBudget.adjust(uid: uid, by: delta)
        if let due = memoryTrim.outputChanged(total: outputBudget.total, now: loop.now) {
            loop.schedule(at: due) { MemoryTrim.returnFreedMemory() }
        }
    }

    /// Whether all connections together, or those of `uid`, hold as much unsent output as they may.
    func isOutputBudgetSpent(uid: UInt32) -> Bool {
        outputBudget.isSpent(uid: uid, totalLimit: config.server.outputBudgetBytes,
                             perUIDLimit: config.server.outputBudgetPerUIDBytes)
    }

    /// Whether a peer may use `admin.*`: root, or the user the daemon runs as.
    func isAdmin(_ peer: PeerCredentials) -> Bool {
        peer.uid == 0 || peer.uid == daemonUID
    }

    func mayNameRemote(_ peer: PeerCredentials) -> Bool {
        isAdmin(peer) || gatewayUIDs.contains(peer.uid)
    }

    // MARK: Stopping

    /// Stops accepting, lets every connection finish what it was asked, and calls `completion` once all are
    /// closed or `gracePeriod` has passed, whichever is first.
    public func shutdown(gracePeriod: Duration, completion: @escaping () -> Void) {
        guard !isStopping else { return }
        isStopping = true
        onStopped = completion
        if let listenerRegistration { loop.deregister(listenerRegistration) }
        listener?.close()
        listener = nil
        for connection in Array(connections.values) { connection.stopReading() }
        if connections.isEmpty {
            finishStopping()
            return
        }
        loop.schedule(at: loop.now + gracePeriod) { [weak self] in
            guard let self else { return }
            self.logger.warning("\(self.connections.count) connection(s) still busy at shutdown; closing them")
            for connection in Array(self.connections.values) { connection.close() }
            self.finishStopping()
        }
    }

    private func finishStopping() {
        let completion = onStopped
        onStopped = nil
        completion?()
    }
}
