import Foundation
import Glibc
import Testing
@testable import RosterSQLite

/// The one-daemon-per-database lock, beyond what opening a storage twice shows (`SQLiteStorageTests`).
@Suite("DatabaseLock")
struct DatabaseLockTests {
    /// The descriptors of this process open on `path`, found as the kernel names them.
    private static func descriptors(openOn path: String) -> [Int32] {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap(Int32.init).filter { descriptor in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
            return target == resolved
        }
    }

    /// A child between fork and exec holds a copy of every descriptor, O_CLOEXEC ones too (they close only at
    /// exec). A `flock` belongs to the open file description, which that copy keeps alive: a release that only
    /// closed our descriptor left the database locked until the child's exec, and a reopen in that window
    /// (a test suite spawning daemons in parallel) was refused. A duplicate here is exactly such a copy.
    @Test func releasingFreesTheLockWhileACopyOfItsDescriptorLives() throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("roster.db")
        let lock = try DatabaseLock.acquire(databasePath: database)
        let held = Self.descriptors(openOn: lock.path)
        #expect(held.count == 1, "the lock's descriptor was not found: \(held)")
        let copies = held.map { fcntl($0, F_DUPFD_CLOEXEC, 0) }
        defer { for copy in copies where copy >= 0 { close(copy) } }
        #expect(copies.allSatisfy { $0 >= 0 })
        lock.release()
        let next = try DatabaseLock.acquire(databasePath: database)
        // And the new holder's lock is whole: a third is refused.
        #expect(throws: DatabaseLock.Failure.heldBy(pid: getpid(), lockPath: next.path)) {
            _ = try DatabaseLock.acquire(databasePath: database)
        }
        next.release()
    }
}
