import Foundation
@testable import RosterCrypto
import RosterSQLite

/// A fresh directory under the system temp dir, removed when the last reference goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("roster-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path inside the directory.
    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    /// A database at `name`, migrated to Roster's schema.
    func rosterDatabase(_ name: String = "roster.db", now: Int64 = 1_700_000_000_000) throws -> Database {
        try RosterSchema.open(path: path(name), now: now)
    }

    /// Every byte of the file at `name`, or empty when it does not exist.
    func bytes(_ name: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: url.appendingPathComponent(name)))) ?? []
    }
}

extension Array where Element == UInt8 {
    /// True when `needle`'s UTF-8 bytes occur anywhere in this buffer.
    func contains(utf8 needle: String) -> Bool {
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty, pattern.count <= count else { return false }
        for start in 0...(count - pattern.count) where self[start] == pattern[0] {
            if self[start..<(start + pattern.count)].elementsEqual(pattern) { return true }
        }
        return false
    }

    /// True when `needle` occurs anywhere in this buffer.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}

/// Small, fast Argon2id parameters for tests that are not about the cost itself.
func fastHasher() throws -> PasswordHasher {
    try PasswordHasher(memoryKiB: 8192, iterations: 1)
}

/// A valid-looking Argon2id string for tests that need a user but never verify a password.
let placeholderHash = "$argon2id$v=19$m=8192,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"

/// Adds `count` accounts `user0`, `user1`, … in one statement (one fsync, not one per account).
func addUsers(_ database: Database, count: Int) throws {
    try database.execute("""
        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < \(count))
        INSERT INTO users(canonical, display, password_hash, created_at)
        SELECT 'user' || i, 'user' || i, '\(placeholderHash)', 0 FROM n
        """)
}
