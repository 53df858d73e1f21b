import RosterCore
import RosterStore

/// The user database as the loop sees it: quick reads right here (prepared statements, microseconds), and
/// everything slow or durable (hashing, verifying, writes with fsync) on the worker pool, with the answer
/// coming back on the loop. Every completion runs on the loop thread.
final class Accounts {
    typealias Completion<T> = (Result<T, RosterError>) -> Void

    private let loop: EventLoop
    private let database: Database
    private let users: UserStore
    private let failures: LoginFailureStore
    let pool: WorkerPool<WorkerContext>
    private let logger: Logger
    var policy: Policy
    /// Log-in attempts being verified right now, per rate-limit key.
    private var attemptsInFlight: [String: Int] = [:]
    private var usernames = UsernameDirectory()
    private var backupInFlight = false
    private static let backupRetryAfterMs: Int64 = 1_000

    init(loop: EventLoop, database: Database, pool: WorkerPool<WorkerContext>, policy: Policy, logger: Logger) {
        self.loop = loop
        self.database = database
        self.users = UserStore(database: database)
        self.failures = LoginFailureStore(database: database)
        self.pool = pool
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

    /// Whether username checks are answered from memory yet (`admin.stats`).
    var usernameDirectoryPhase: UsernameDirectory.Phase { usernames.phase }

    /// Fills the in-memory username directory from a worker's snapshot; called once, after READY.
    func loadUsernameDirectory() {
        let logger = self.logger
        let started = loop.now
        offload({ context in
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

    // MARK: Work on the pool

    private func offload<T>(bounded: Bool = false, _ job: @escaping @Sendable (inout WorkerContext) -> Result<T, RosterError>,
                            completion: @escaping Completion<T>) {
        pool.run(on: loop, bounded: bounded, job, completion: completion)
    }

    func checkQuality(password: Secret, username: String, completion: @escaping (CheckResult) -> Void) {
        offload({ context in .success(context.quality().check(password: password, username: username)) }) { result in
            switch result {
            case .success(let verdict): completion(verdict)
            case .failure: completion(.failed)
            }
        }
    }

    /// Hashes and stores a new account; `taken` names the field that clashed.
    func register(username: String, password: Secret, email: String?, completion: @escaping Completion<UserRecord>) {
        let memory = policy.hashMemoryKiB
        let iterations = policy.hashIterations
        let logger = self.logger
        offload(bounded: true, { context in
            do {
                let hash = try context.hasher(memoryKiB: memory, iterations: iterations).hash(password.exposed)
                let store = UserStore(database: try context.database())
                return .success(try store.insertUser(canonical: username, display: username, email: email,
                                                     passwordHash: hash, createdAt: WallClock.nowMs()))
            } catch let error as UserStoreError {
                return .failure(error.rosterError(logger: logger))
            } catch let error as StoreError {
                return .failure(error.rosterError(logger: logger))
            } catch {
                logger.error("registration failed: \(error)")
                return .failure(.internal)
            }
        }, completion: { [weak self] result in
            if case .success(let user) = result { self?.usernames.add(user.canonical) }
            completion(result)
        })
    }

    /// Verifies a log-in under the shared rate limit: per account and per peer uid, failures counted durably.
    func login(identifier: String, password: Secret, peerUID: UInt32, completion: @escaping Completion<UserRecord>) {
        let now = WallClock.nowMs()
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
        offload(bounded: true, { context in
            Accounts.verify(found, password: password, failureKeys: keys, memoryKiB: memory, iterations: iterations,
                            revealUnknownUsers: reveal, context: &context, logger: logger)
        }, completion: { [weak self] result in
            if let self {
                for key in keys {
                    let left = self.attemptsInFlight[key, default: 1] - 1
                    self.attemptsInFlight[key] = left > 0 ? left : nil
                }
            }
            completion(result)
        })
    }

    /// The worker side of a log-in: a real verify, or a dummy one of the same cost for an unknown user.
    private static func verify(_ user: UserRecord?, password: Secret, failureKeys: [String], memoryKiB: Int,
                               iterations: Int, revealUnknownUsers: Bool, context: inout WorkerContext,
                               logger: Logger) -> Result<UserRecord, RosterError> {
        do {
            let hasher = try context.hasher(memoryKiB: memoryKiB, iterations: iterations)
            let database = try context.database()
            guard let user, hasher.verify(password.exposed, against: user.passwordHash) else {
                if user == nil { hasher.dummyVerify(password.exposed) }
                let failures = LoginFailureStore(database: database)
                let now = WallClock.nowMs()
                try failures.record(keys: failureKeys, at: now)
                guard revealUnknownUsers else { return .failure(.invalidCredentials) }
                return .failure(user == nil ? .notFound : .wrongPassword)
            }
            if hasher.needsRehash(user.passwordHash) {
                let upgraded = try hasher.hash(password.exposed)
                try UserStore(database: database).updatePasswordHash(userID: user.id, hash: upgraded)
                logger.info("password hash upgraded to the parameters in force", [("ROSTER_USER", user.canonical)])
            }
            return .success(user)
        } catch let error as UserStoreError {
            return .failure(error.rosterError(logger: logger))
        } catch let error as StoreError {
            return .failure(error.rosterError(logger: logger))
        } catch {
            logger.error("log-in verification failed: \(error)")
            return .failure(.internal)
        }
    }

    /// A fresh bearer token for `user`, stored only as its hash.
    func issueToken(for user: UserRecord, completion: @escaping Completion<String>) {
        let logger = self.logger
        offload({ context in
            do {
                let token = try SessionToken.generate()
                try SessionTokenStore(database: try context.database()).insert(tokenHash: token.hash, userID: user.id,
                                                                               now: WallClock.nowMs())
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
    func resume(bearer: String, completion: @escaping Completion<(UserRecord, [UInt8])>) {
        guard let hash = SessionToken.hash(bearer: bearer) else {
            completion(.failure(.notFound))
            return
        }
        let idleMs = policy.sessionIdle.nanoseconds / 1_000_000
        let logger = self.logger
        offload({ context in
            do {
                let store = SessionTokenStore(database: try context.database())
                guard let user = try store.resume(tokenHash: hash, now: WallClock.nowMs(), idleLimitMs: idleMs) else {
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

    func revoke(tokenHash: [UInt8], completion: @escaping Completion<Void>) {
        let logger = self.logger
        offload({ context in
            do {
                _ = try SessionTokenStore(database: try context.database()).revoke(tokenHash: tokenHash)
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
    func backup(to path: String, completion: @escaping Completion<BackupSummary>) {
        guard !backupInFlight else { return completion(.failure(.busy(retryAfterMs: Self.backupRetryAfterMs))) }
        backupInFlight = true
        let logger = self.logger
        offload({ context in
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
        _ = pool.submit(bounded: false) { context in
            guard let database = try? context.database() else { return }
            let now = WallClock.nowMs()
            _ = try? LoginFailureStore(database: database).prune(olderThan: now - policy.rateLimitInterval.nanoseconds / 1_000_000)
            _ = try? SessionTokenStore(database: database).purgeExpired(now: now, idleLimitMs: policy.sessionIdle.nanoseconds / 1_000_000)
        }
    }
}
