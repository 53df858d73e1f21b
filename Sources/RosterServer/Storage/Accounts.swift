import RosterCore
import RosterRuntime
import RosterCrypto
import RosterStorage
import RosterStore

/// The user database as the loop sees it: quick reads right here (prepared statements, microseconds), and
/// everything slow or durable off the loop, with the answer coming back on the loop: Argon2id on the hashing
/// lane, writes with fsync on the storage lane (see `WorkerLanes`). Every completion runs on the loop thread,
/// and every job is charged to the connection that asked (`QueueCharge`).
final class Accounts {
    typealias Completion<T> = (Result<T, RosterError>) -> Void

    private let loop: EventLoop
    private let database: Database
    private let users: UserStore
    private let failures: LoginFailureStore
    let lanes: WorkerLanes
    private let logger: Logger
    var policy: Policy
    /// Log-in attempts being verified right now, per rate-limit key.
    private var attemptsInFlight: [String: Int] = [:]
    private var usernames = UsernameDirectory()
    private var backupInFlight = false
    private static let backupRetryAfterMs: Int64 = 1_000

    init(loop: EventLoop, database: Database, lanes: WorkerLanes, policy: Policy, logger: Logger) {
        self.loop = loop
        self.database = database
        self.users = UserStore(database: database)
        self.failures = LoginFailureStore(database: database)
        self.lanes = lanes
        self.policy = policy
        self.logger = logger
    }

    // MARK: Reads on the loop

    func usernameAvailability(_ canonical: String) -> CheckResult {
        if let taken = usernames.contains(canonical) { return taken ? .taken : .available }
        return readCheck { () throws(StoreError) in try users.usernameExists(canonical) ? .taken : .available }
    }

    func emailAvailability(_ canonical: String) -> CheckResult {
        readCheck { () throws(StoreError) in try users.emailExists(canonical) ? .taken : .available }
    }

    func accountExistence(_ identifier: String) -> CheckResult {
        readCheck { () throws(StoreError) in try user(identifier: identifier) != nil ? .exists : .missing }
    }

    func userCount() -> Int {
        usernames.count ?? (try? users.userCount()) ?? 0
    }

    /// Interim, until `admin.stats` reads `StorageStatistics`: every user's contacts, from the same database.
    func contactCount() -> Int { (try? ContactStore(database: database).totalCount()) ?? 0 }

    /// Whether username checks are answered from memory yet (`admin.stats`).
    var usernameDirectoryPhase: UsernameDirectory.Phase { usernames.phase }

    /// Fills the in-memory username directory from a worker's snapshot; called once, after READY.
    func loadUsernameDirectory() {
        let logger = self.logger
        let started = loop.now
        store(.daemon, force: true, { context in
            do throws(StoreError) {
                return .success(try UserStore(database: try context.database()).allCanonicalUsernames())
            } catch {
                logger.error("cannot read usernames into memory; the database answers every check: \(error)")
                return .failure(.internal)
            }
        }, completion: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let names):
                self.usernames.fill(with: names)
                let elapsed = (self.loop.now - started).nanoseconds / 1_000_000
                self.logger.info("\(names.count) username(s) in memory, read in \(elapsed) ms")
            case .failure:
                self.usernames.fillFailed()
            }
        })
    }

    /// A canonical username, or an email when it holds an `@` (as the log-in form takes either).
    private func user(identifier: String) throws(StoreError) -> UserRecord? {
        identifier.contains("@") ? try users.user(email: identifier) : try users.user(canonical: identifier)
    }

    private func readCheck(_ body: () throws(StoreError) -> CheckResult) -> CheckResult {
        do {
            return try body()
        } catch {
            logger.error("user database read failed: \(error)")
            return .failed
        }
    }

    // MARK: Work on the lanes

    private func hash<T: Sendable>(_ charge: QueueCharge, _ job: @escaping @Sendable (inout WorkerContext) -> Result<T, RosterError>,
                         completion: @escaping Completion<T>) {
        lanes.hashing.run(on: loop, charge: charge, job, completion: completion)
    }

    /// `force` for the write that follows a hash already computed, which must not be refused (see `FairQueue`).
    private func store<T: Sendable>(_ charge: QueueCharge, force: Bool = false,
                          _ job: @escaping @Sendable (inout WorkerContext) -> Result<T, RosterError>,
                          completion: @escaping Completion<T>) {
        lanes.storage.run(on: loop, charge: charge, force: force, job, completion: completion)
    }

    /// libpwquality is CPU work but not Argon2id: a keystroke's verdict waits for it, so it does not stand back.
    func checkQuality(password: Secret, username: String, charge: QueueCharge, completion: @escaping (CheckResult) -> Void) {
        store(charge, { context in .success(context.quality().check(password: password, username: username)) }) { result in
            switch result {
            case .success(let verdict): completion(verdict)
            case .failure: completion(.failed)
            }
        }
    }

    /// Hashes (hashing lane) and stores (storage lane) a new account; `taken` names the field that clashed.
    func register(username: String, password: Secret, email: String?, charge: QueueCharge,
                  completion: @escaping Completion<UserRecord>) {
        let memory = policy.hashMemoryKiB
        let iterations = policy.hashIterations
        let logger = self.logger
        hash(charge, { context in
            do throws(CryptoError) {
                return .success(try context.hasher(memoryKiB: memory, iterations: iterations).hash(password.exposed))
            } catch {
                logger.error("registration failed: \(error)")
                return .failure(.internal)
            }
        }, completion: { [weak self] hashed in
            guard let self else { return }
            let hash: String
            switch hashed {
            case .success(let computed): hash = computed
            case .failure(let error): return completion(.failure(error))
            }
            self.store(charge, force: true, { context in
                do {
                    let store = UserStore(database: try context.database())
                    return .success(try context.writeTurn.take {
                        try store.insertUser(canonical: username, display: username, email: email, passwordHash: hash,
                                             createdAt: SystemWallClock().nowMs())
                    })
                } catch {
                    return .failure(Accounts.writeFailure(error, "registration", logger: logger))
                }
            }, completion: { [weak self] result in
                if case .success(let user) = result { self?.usernames.add(user.canonical) }
                completion(result)
            })
        })
    }

    /// Verifies a log-in under the shared rate limit: per account and per peer uid, failures counted durably.
    /// The password is verified on the hashing lane; the failure it records, or the upgraded hash, is written on
    /// the storage lane before the answer, so the count survives a restart.
    func login(identifier: String, password: Secret, peerUID: UInt32, charge: QueueCharge,
               completion: @escaping Completion<UserRecord>) {
        let now = SystemWallClock().nowMs()
        let found: UserRecord?
        do {
            found = try user(identifier: identifier)
        } catch {
            logger.error("user database read failed: \(error)")
            completion(.failure(.internal))
            return
        }
        let accountKey = LoginRateLimit.accountKey(found: found?.canonical, identifier: identifier)
        let peerKey = "uid:\(peerUID)"
        let perAccount = LoginRateLimit.perAccount(policy)
        let perPeer = LoginRateLimit.perPeer(policy)
        do {
            for (key, limit) in [(accountKey, perAccount), (peerKey, perPeer)] {
                let times = try failures.failureTimes(key: key, since: limit.windowStart(now: now))
                if case .limited(let wait) = limit.decide(failures: times, inFlight: attemptsInFlight[key, default: 0], now: now) {
                    completion(.failure(.rateLimited(retryAfterMs: wait)))
                    return
                }
            }
        } catch {
            logger.error("rate-limit read failed: \(error)")
            completion(.failure(.internal))
            return
        }
        let keys = [accountKey, peerKey]
        for key in keys { attemptsInFlight[key, default: 0] += 1 }
        let memory = policy.hashMemoryKiB
        let iterations = policy.hashIterations
        let reveal = policy.revealUnknownUsers
        let logger = self.logger
        let finish: Completion<UserRecord> = { [weak self] result in
            if let self {
                for key in keys {
                    let left = self.attemptsInFlight[key, default: 1] - 1
                    self.attemptsInFlight[key] = left > 0 ? left : nil
                }
            }
            completion(result)
        }
        hash(charge, { context in
            Accounts.verify(found, password: password, memoryKiB: memory, iterations: iterations,
                            context: &context, logger: logger)
        }, completion: { [weak self] verified in
            guard let self else { return }
            switch verified {
            case .failure(let error):
                finish(.failure(error))
            case .success(.accepted(let user, upgradedHash: nil)):
                finish(.success(user))
            case .success(let outcome):
                self.store(charge, force: true, { context in
                    Accounts.record(outcome, failureKeys: keys, revealUnknownUsers: reveal, context: &context, logger: logger)
                }, completion: finish)
            }
        })
    }

    /// What the hashing lane found, for the storage lane to record.
    private enum Verification: Sendable {
        case accepted(UserRecord, upgradedHash: String?)
        case refused(knownUser: Bool)
    }

    /// The hashing side of a log-in: a real verify, or a dummy one of the same cost for an unknown user, and a
    /// new hash when the stored one was made with other parameters.
    private static func verify(_ user: UserRecord?, password: Secret, memoryKiB: Int, iterations: Int,
                               context: inout WorkerContext, logger: Logger) -> Result<Verification, RosterError> {
        do throws(CryptoError) {
            let hasher = try context.hasher(memoryKiB: memoryKiB, iterations: iterations)
            guard let user, hasher.verify(password.exposed, against: user.passwordHash) else {
                if user == nil { hasher.dummyVerify(password.exposed) }
                return .success(.refused(knownUser: user != nil))
            }
            let upgraded = hasher.needsRehash(user.passwordHash) ? try hasher.hash(password.exposed) : nil
            return .success(.accepted(user, upgradedHash: upgraded))
        } catch {
            logger.error("log-in verification failed: \(error)")
            return .failure(.internal)
        }
    }

    /// The storage side of a log-in: the failure counted, or the upgraded hash stored.
    private static func record(_ verification: Verification, failureKeys: [String], revealUnknownUsers: Bool,
                               context: inout WorkerContext, logger: Logger) -> Result<UserRecord, RosterError> {
        do {
            let database = try context.database()
            switch verification {
            case .refused(let knownUser):
                try context.writeTurn.take { () throws(StoreError) in
                    try LoginFailureStore(database: database).record(keys: failureKeys, at: SystemWallClock().nowMs())
                }
                guard revealUnknownUsers else { return .failure(.invalidCredentials) }
                return .failure(knownUser ? .wrongPassword : .notFound)
            case .accepted(let user, let upgradedHash):
                if let upgradedHash {
                    try context.writeTurn.take {
                        try UserStore(database: database).updatePasswordHash(userID: user.id, hash: upgradedHash)
                    }
                    logger.info("password hash upgraded to the parameters in force", [("ROSTER_USER", user.canonical)])
                }
                return .success(user)
            }
        } catch {
            return .failure(writeFailure(error, "log-in verification", logger: logger))
        }
    }

    /// What a storage job's error answers: the store's own reasons (`taken`, `storage_full`, …), else `internal`.
    private static func writeFailure(_ error: any Error, _ operation: String, logger: Logger) -> RosterError {
        switch error {
        case let error as UserStoreError: return error.rosterError(logger: logger)
        case let error as StoreError: return error.rosterError(logger: logger)
        default:
            logger.error("\(operation) failed: \(error)")
            return .internal
        }
    }

    /// A fresh bearer token for `user`, stored only as its hash. It follows a verified password or a new account,
    /// so it is never refused: the expensive part already ran.
    func issueToken(for user: UserRecord, charge: QueueCharge, completion: @escaping Completion<String>) {
        let logger = self.logger
        store(charge, force: true, { context in
            do {
                let token = try SessionToken.generate()
                let store = SessionTokenStore(database: try context.database())
                try context.writeTurn.take { () throws(StoreError) in
                    try store.insert(tokenHash: token.hash, userID: user.id, now: SystemWallClock().nowMs())
                }
                return .success(token.bearer)
            } catch let error as StoreError {
                return .failure(error.rosterError(logger: logger))
            } catch {
                logger.error("token generation failed: \(error)")
                return .failure(.internal)
            }
        }, completion: completion)
    }

    /// The account behind a token that has not idled out; `not_found` for any other.
    func resume(bearer: String, charge: QueueCharge, completion: @escaping Completion<(UserRecord, [UInt8])>) {
        guard let hash = SessionToken.hash(bearer: bearer) else {
            completion(.failure(.notFound))
            return
        }
        let idleMs = policy.sessionIdle.nanoseconds / 1_000_000
        let logger = self.logger
        store(charge, { context in
            do {
                let store = SessionTokenStore(database: try context.database())
                // A resume writes too: it moves the token's last use.
                let found = try context.writeTurn.take { () throws(StoreError) in
                    try store.resume(tokenHash: hash, now: SystemWallClock().nowMs(), idleLimitMs: idleMs)
                }
                guard let user = found else {
                    return .failure(.notFound)
                }
                return .success((user, hash))
            } catch let error as StoreError {
                return .failure(error.rosterError(logger: logger))
            } catch {
                return .failure(.internal)
            }
        }, completion: completion)
    }

    /// Never refused: a logout must take effect even while the user's budget is spent.
    func revoke(tokenHash: [UInt8], charge: QueueCharge, completion: @escaping Completion<Void>) {
        let logger = self.logger
        store(charge, force: true, { context in
            do {
                let store = SessionTokenStore(database: try context.database())
                _ = try context.writeTurn.take { () throws(StoreError) in try store.revoke(tokenHash: tokenHash) }
                return .success(())
            } catch let error as StoreError {
                return .failure(error.rosterError(logger: logger))
            } catch {
                return .failure(.internal)
            }
        }, completion: completion)
    }

    /// An online copy of the database, made by a worker's own connection while the loop keeps serving. One at a
    /// time: each holds a worker and reads the whole file for seconds, so a second one waits its turn (`busy`).
    func backup(to path: String, charge: QueueCharge, completion: @escaping Completion<BackupSummary>) {
        guard !backupInFlight else { return completion(.failure(.busy(retryAfterMs: Self.backupRetryAfterMs))) }
        backupInFlight = true
        let logger = self.logger
        store(charge, { context in
            do throws(BackupError) {
                let database: Database
                do throws(StoreError) { database = try context.database() } catch { throw .store(error) }
                return .success(try database.backup(to: path))
            } catch {
                return .failure(error.rosterError(logger: logger, path: path))
            }
        }, completion: { [weak self] result in
            self?.backupInFlight = false
            completion(result)
        })
    }

    /// Drops failures older than the window and tokens idle past their limit; both are dead weight by then.
    func pruneExpired() {
        let policy = self.policy
        _ = lanes.storage.submit(.daemon, force: true) { context in
            guard let database = try? context.database() else { return }
            let now = SystemWallClock().nowMs()
            context.writeTurn.take {
                _ = try? LoginFailureStore(database: database).prune(olderThan: now - policy.rateLimitInterval.nanoseconds / 1_000_000)
                _ = try? SessionTokenStore(database: database).purgeExpired(now: now, idleLimitMs: policy.sessionIdle.nanoseconds / 1_000_000)
            }
        }
    }
}
