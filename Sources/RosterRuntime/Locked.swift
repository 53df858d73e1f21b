import Glibc

/// A value behind a pthread mutex, with a condition to wait on for threads that sleep until the value lets them
/// go on (a worker until a job it may run is queued). Synchronization's Mutex waits on futexes that
/// ThreadSanitizer cannot see, so every access under it read as a race in `make sanitize`; pthread mutexes and
/// conditions are understood by the sanitizers.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Calls `body` under the lock until it returns a value, sleeping between calls until `signal` or `broadcast`.
    public func wait<Result>(until body: (inout Value) -> Result?) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = body(&value) { return result }
            pthread_cond_wait(condition, mutex)
        }
    }

    /// Wakes one thread waiting in `wait`.
    public func signal() { pthread_cond_signal(condition) }

    /// Wakes every thread waiting in `wait`.
    public func broadcast() { pthread_cond_broadcast(condition) }
}
