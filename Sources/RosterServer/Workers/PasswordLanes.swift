import RosterCore
import RosterCrypto
import RosterRuntime

/// The daemon's own worker pools, for the password work (the storage backend has its own). Argon2id alone
/// runs on `hashing`, which stands back for the loop (idle priority and its watchdog); libpwquality
/// runs on `checks` at the daemon's own priority, because a keystroke's verdict waits for it. Both are fed by
/// fair queues: one peer's flood of registrations leaves room for another's log-in.
final class PasswordLanes: PasswordWork {
    let hashing: WorkerPool<HashingContext>
    let checks: WorkerPool<QualityContext>
    private let loop: EventLoop
    private let logger: Logger
    /// The hash parameters in force; a reload changes them for hashes computed from then on.
    var policy: Policy

    init(settings: ServerSettings, cores: Int, policy: Policy, loop: EventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
        self.policy = policy
        hashing = WorkerPool(threads: settings.hashWorkers > 0 ? settings.hashWorkers : cores,
                             budget: settings.hashingBudget, priority: .standBack, typicalJob: .milliseconds(40),
                             makeContext: { HashingContext() })
        // cracklib takes turns across the whole process anyway (see `PasswordQualityChecker`): one thread is all
        // it can use.
        checks = WorkerPool(threads: 1, budget: settings.storageBudget, priority: .normal, typicalJob: .milliseconds(5),
                            makeContext: { QualityContext() })
    }

    /// A reload's budgets apply to jobs queued from now on.
    func apply(_ settings: ServerSettings) {
        hashing.budget = settings.hashingBudget
        checks.budget = settings.storageBudget
    }

    func hash(_ password: Secret, charge: QueueCharge, completion: @escaping (Result<String, RosterError>) -> Void) {
        let (memory, iterations) = (policy.hashMemoryKiB, policy.hashIterations)
        let logger = self.logger
        hashing.run(on: loop, charge: charge, { context in
            do throws(CryptoError) {
                return .success(try context.hasher(memoryKiB: memory, iterations: iterations).hash(password.exposed))
            } catch {
                logger.error("registration failed: \(error)")
                return .failure(.internal)
            }
        }, completion: completion)
    }

    func verify(_ password: Secret, against hash: String?, charge: QueueCharge,
                completion: @escaping (Result<PasswordVerification, RosterError>) -> Void) {
        let (memory, iterations) = (policy.hashMemoryKiB, policy.hashIterations)
        let logger = self.logger
        hashing.run(on: loop, charge: charge, { context in
            do throws(CryptoError) {
                let hasher = try context.hasher(memoryKiB: memory, iterations: iterations)
                guard let hash else {
                    hasher.dummyVerify(password.exposed)
                    return .success(.refused)
                }
                guard hasher.verify(password.exposed, against: hash) else { return .success(.refused) }
                return .success(.accepted(upgradedHash: hasher.needsRehash(hash) ? try hasher.hash(password.exposed) : nil))
            } catch {
                logger.error("log-in verification failed: \(error)")
                return .failure(.internal)
            }
        }, completion: completion)
    }

    func checkQuality(_ password: Secret, username: String, charge: QueueCharge,
                      completion: @escaping (CheckResult) -> Void) {
        checks.run(on: loop, charge: charge, { context in
            .success(context.checker().check(password: password, username: username))
        }, completion: { result in
            switch result {
            case .success(let verdict): completion(verdict)
            case .failure: completion(.failed)
            }
        })
    }
}

/// What a hashing thread keeps: its hasher for the parameters in force, built lazily so that a failure reads
/// as a job's error, not a dead thread.
struct HashingContext {
    private var hasher: PasswordHasher?

    /// A hasher for these parameters; a reload that changed them gets a new one (its set-up costs one hash).
    mutating func hasher(memoryKiB: Int, iterations: Int) throws(CryptoError) -> PasswordHasher {
        if let hasher, hasher.memoryKiB == memoryKiB, hasher.iterations == iterations { return hasher }
        let fresh = try PasswordHasher(memoryKiB: memoryKiB, iterations: iterations)
        hasher = fresh
        return fresh
    }
}

/// What the libpwquality thread keeps: its settings, which are not shared between threads.
struct QualityContext {
    private var quality: PasswordQualityChecker?

    mutating func checker() -> PasswordQualityChecker {
        if let quality { return quality }
        let checker = PasswordQualityChecker()
        quality = checker
        return checker
    }
}
