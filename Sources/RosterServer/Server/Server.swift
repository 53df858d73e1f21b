import Glibc
import RosterCore
import RosterCrypto
import RosterRuntime
import RosterProtocol
import RosterStorage

/// The daemon's runtime, assembled from its parts: the acceptor takes connections into the connection table, the
/// dispatcher serves their lines through the method groups, the session book keeps who is logged in where, the
/// storage feed brings what the storage reports, the output budget bounds what all connections hold unsent, and
/// housekeeping runs the periodic chores. The server wires them together, hands each reload on, and shuts down
/// cleanly. Everything here runs on the loop thread.
public final class Server {
    /// Unfinished long lines of every connection together (see `ServerSettings.maxHeldLineBytes`).
    let heldLines = HeldLineBytes()
    let loop: EventLoop
    public var logger: Logger {
        didSet { loggerChanged() }
    }
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
    /// Shared by every connection: reads happen one at a time on this thread, so one buffer serves all. A
    /// read's lines are served straight from it before the next read (see `LineFramer.feedBorrowing`).
    let readBuffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 65_536)
    let stats: ServerStats
    let connections: ConnectionTable<Connection>
    let trust: PeerTrust
    let acceptor: ConnectionAcceptor
    let output: ServerOutput
    let sessions: SessionBook
    let feed: StorageFeed
    let figures: ServerFigures
    let dispatcher: Dispatcher<Connection>
    let methods: ServerMethods
    let housekeeping: Housekeeping
    /// What changes queue as mail (`[Mail]`); the account procedures write through it.
    let mailOutbox: MailOutbox
    /// Hands queued mail to the host's mail program; nil when the server was built without a `MailHost` (tests).
    let mailSender: MailSender?
    private let mailLane: SendmailLane?
    /// `admin.audit` and its followers (a test reads how they stand).
    var adminAuditMethods: AdminAuditMethods<SessionBook> { methods.adminAudit }
    private(set) var isStopping = false
    private var onStopped: (() -> Void)?

    /// `formScheduler` and `choreScheduler` are the forms' and housekeeping's clocks and timers: the loop, unless a
    /// test hands in a manual clock.
    init(loop: EventLoop, config: DaemonConfig, storage: any Storage, passwords: PasswordLanes,
         contacts: ContactsService, logger: Logger, secrets: AccountSecrets, clock: any WallClock = SystemWallClock(),
         formScheduler: (any Scheduler)? = nil, choreScheduler: (any Scheduler)? = nil, mail: MailHost? = nil) {
        self.loop = loop
        let stats = ServerStats(), connections = ConnectionTable<Connection>(), trust = PeerTrust()
        self.stats = stats
        self.connections = connections
        self.trust = trust
        self.config = config
        self.storage = storage
        self.passwords = passwords
        let accounts = AccountProcedures(storage: storage, passwords: passwords, policy: config.policy, logger: logger,
                                         secrets: secrets, clock: clock, audit: config.audit)
        self.accounts = accounts
        let hostName = mail?.hostName ?? "localhost"
        mailOutbox = MailOutbox(settings: config.mail, hostName: hostName, secrets: secrets, wallClock: clock,
                                scheduler: choreScheduler ?? loop, logger: logger)
        accounts.mail = mailOutbox
        mailLane = mail?.lane
        mailSender = mail.map {
            MailSender(scheduler: choreScheduler ?? loop, storage: BoundStorage { storage.acting(for: $0) }, lane: $0.lane,
                       seal: secrets.mailSeal, wallClock: clock, claimant: $0.claimant, auditPeer: $0.auditPeer,
                       hostName: hostName, settings: config.mail, logger: logger)
        }
        self.contacts = contacts
        self.logger = logger
        acceptor = ConnectionAcceptor(loop: loop, logger: logger)
        let output = ServerOutput(scheduler: loop, settings: config.server)
        self.output = output
        let sessions = SessionBook(connections: connections, contacts: contacts, storage: storage, output: output,
                                   stats: stats, trust: trust, config: config, logger: logger)
        self.sessions = sessions
        let feed = StorageFeed(storage: storage, sessions: sessions, contacts: contacts, logger: logger,
                               sessionIdle: config.policy.sessionIdle)
        self.feed = feed
        let figures = ServerFigures(clock: loop, connections: connections, stats: stats, passwords: passwords, feed: feed,
                                    trust: trust, logger: logger)
        self.figures = figures
        dispatcher = Dispatcher(plain: PlainRequests(storage: storage, accounts: accounts, stats: stats,
                                                     policy: config.policy),
                                policy: config.policy, maxLineBytes: config.server.maxLineBytes)
        methods = ServerMethods(storage: storage, accounts: accounts, contacts: contacts, formScheduler: formScheduler ?? loop,
                                sessions: sessions, figures: figures)
        housekeeping = Housekeeping(scheduler: choreScheduler ?? loop, storage: storage, status: figures, wallClock: clock,
                                    config: config, logger: logger,
                                    sweepFailedEntries: { [unowned accounts, unowned mailOutbox] in
                                        accounts.sweepFailedEntries()
                                        mailOutbox.sweep()
                                    })
        wire()
    }

    deinit {
        readBuffer.deallocate()
    }

    /// What each part hears of the others.
    private func wire() {
        dispatcher.register(methods.all)
        sessions.methodSpecs = dispatcher.methodSpecs
        acceptor.onAccept = { [unowned self] fd in self.admit(fd) }
        contacts.onChange = { [unowned sessions] userID in sessions.contactsChanged(of: userID) }
        accounts.tokensPushedOut = { [unowned sessions] hashes in sessions.tokensRevoked(hashes) }
        feed.onAudit = { [unowned audit = methods.adminAudit] entry in audit.entryCommitted(entry) }
        feed.onPhaseChange = { [unowned housekeeping] in housekeeping.postStatus() }
        mailOutbox.onCommitted = { [weak mailSender] in mailSender?.poke() }
    }

    /// A reload's new configuration reaches every part that judges by it.
    private func configChanged() {
        accounts.policy = config.policy
        accounts.failedEntries.perMinute = config.audit.failedLoginEntriesPerMinute
        passwords.policy = config.policy
        passwords.apply(config.server)
        storage.apply(config.server)
        dispatcher.policy = config.policy
        dispatcher.maxLineBytes = config.server.maxLineBytes
        dispatcher.plain.policy = config.policy
        output.apply(config.server)
        feed.sessionIdle = config.policy.sessionIdle
        for connection in connections.values { connection.settings = config.server }
        sessions.configChanged(config)
        housekeeping.config = config
        mailOutbox.settings = config.mail
        mailSender?.settings = config.mail
        mailSender?.poke()
    }

    /// A new log level reaches every part's lines at once.
    private func loggerChanged() {
        acceptor.logger = logger
        sessions.logger = logger
        feed.logger = logger
        figures.logger = logger
        housekeeping.logger = logger
        mailOutbox.logger = logger
        mailSender?.logger = logger
    }

    /// `[Server] GatewayUsers=` as uids, resolved by the daemon at start and at each reload (a name is looked up
    /// in the user database, which is I/O, so the server is handed the answer).
    public var gatewayUIDs: Set<UInt32> {
        get { trust.gatewayUIDs }
        set { trust.gatewayUIDs = newValue }
    }

    var daemonUID: UInt32 { trust.daemonUID }

    public var connectionCount: Int { connections.count }

    /// Called for each committed audit entry, as the storage reports it.
    func auditCommitted(_ entry: AuditEntry, _ origin: AuditOrigin) {
        feed.auditCommitted(entry, origin)
    }

    // MARK: Housekeeping

    /// The watchdog, the status line and the pruning, from now until shutdown (see `Housekeeping`).
    public func startHousekeeping(notifier: SystemdNotifier) {
        housekeeping.start(notifier: notifier)
        mailSender?.start()
    }

    /// Work that may wait until READY=1 was sent, so a large database does not slow start-up.
    public func warmUp() {
        housekeeping.warmUp()
    }

    // MARK: Accepting

    public func listen(on listener: UnixListener) throws(SystemError) {
        try acceptor.listen(on: listener)
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
        let limits = config.server
        switch connections.admission(uid: peer.uid, maxConnections: limits.maxConnections,
                                     maxPerUID: limits.maxConnectionsPerUID) {
        case .refused(let limit):
            return ConnectionAcceptor.refuse(fd, limit: limit, logger: logger)
        case .admitted:
            break
        }
        let id = connections.takeID()
        let connection = Connection(id: id, fd: fd, peer: peer, session: Session(), maxLineBytes: limits.maxLineBytes,
                                    settings: limits, environment: self, heldLines: heldLines)
        do {
            try connection.start()
        } catch {
            logger.warning("cannot watch a new connection: \(error)")
            close(fd)
            return
        }
        connections.insert(connection)
        stats.connectionsAccepted += 1
        logger.debug("connection opened", [("ROSTER_CONNECTION", String(id)), ("ROSTER_PEER_UID", String(peer.uid))])
    }

    func connectionClosed(_ connection: Connection) {
        guard connections.remove(connection) else { return }
        sessions.connectionClosed(connection)
        dispatcher.dropHeld(of: connection)
        methods.adminAudit.connectionClosed(connection.id)
        logger.debug("connection closed", [("ROSTER_CONNECTION", String(connection.id))])
        if isStopping && connections.isEmpty { finishStopping() }
    }

    // MARK: What a connection asks of the server

    func dispatch(line: UnsafeBufferPointer<UInt8>, from connection: Connection) {
        dispatcher.dispatch(line: line, from: connection)
    }

    func rejectOversizedLine(from connection: Connection) {
        dispatcher.rejectOversizedLine(from: connection)
    }

    func sendError(_ error: RosterError, id: JSONValue, to connection: Connection) {
        dispatcher.sendError(error, id: id, to: connection)
    }

    func authChangeEnded(on connection: Connection) {
        dispatcher.authChangeEnded(on: connection)
    }

    /// A connection's queue grew or shrank by `delta` bytes.
    func outputQueuedChanged(uid: UInt32, by delta: Int) {
        output.queuedChanged(uid: uid, by: delta)
    }

    /// Whether all connections together, or those of `uid`, hold as much unsent output as they may.
    func isOutputBudgetSpent(uid: UInt32) -> Bool {
        output.isSpent(uid: uid)
    }

    /// A peer caught up with its output: a contacts form that skipped results meanwhile refreshes once, and an audit
    /// follower that missed entries hears how many.
    func outputDrained(_ connection: Connection) {
        sessions.outputDrained(connection)
        methods.adminAudit.outputDrained(connection.id)
    }

    // MARK: Stopping

    /// Stops accepting, lets every connection finish what it was asked, and calls `completion` once all are
    /// closed or `gracePeriod` has passed, whichever is first.
    public func shutdown(gracePeriod: Duration, completion: @escaping () -> Void) {
        guard !isStopping else { return }
        isStopping = true
        onStopped = completion
        housekeeping.stop()
        mailSender?.stop()
        mailLane?.stop()
        acceptor.close()
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

/// The daemon's connections are what its connection table holds.
extension Connection: ConnectionTableMember {}
