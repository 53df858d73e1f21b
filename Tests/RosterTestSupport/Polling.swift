import Glibc

/// Asks `probe` every 10 ms for up to 15 s and returns its first answer, or nil: for what another thread (a
/// worker, the kernel's scheduler) sets on its own time, which a test can only watch.
public func poll<T>(_ probe: () -> T?) -> T? {
    for _ in 0..<1_500 {
        if let value = probe() { return value }
        usleep(10_000)
    }
    return nil
}
