import Foundation
import Glibc
import RosterPostgresTesting
import RosterProtocol
import Testing

/// `rosterd --copy-database` that fails midway leaves nothing in the target that refuses its retry: the copy is
/// one transaction there, rolled back when it stops.
@Suite("rosterd --copy-database after a failed copy")
struct CopyRetryTests {
    @Test func aCopyToPostgreSQLRefusedMidwayLeavesTheTargetEmptyAndTheRetryGoesThrough() throws {
        let source = try TestDaemon(config: CopyFixture.config)
        _ = try CopyFixture.fill(source)
        CopyFixture.stop(source)
        // A contact's note with a NUL, which SQLite keeps and PostgreSQL's text cannot: the accounts, tokens and
        // failed log-ins are written before the contacts' batch is refused.
        #expect(run(["/usr/bin/sqlite3", source.databasePath,
                     "UPDATE contacts SET note = 'a' || char(0) || 'b' WHERE id = (SELECT max(id) FROM contacts)"]) == 0)
        let shared = try SharedDatabase()
        let from = "sqlite:" + source.databasePath
        let to = "postgresql:" + shared.conninfo

        let failed = try CopyFixture.copy(from, to, in: source.directory)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("NUL character"), "\(failed.stderr)")
        let left = try shared.cluster.psql("SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM session_tokens) "
                                           + "+ (SELECT count(*) FROM login_failures)",
                                           database: String(shared.conninfo.split(separator: "=").last ?? ""))
        #expect(left.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "the failed copy left rows: \(left)")

        // The operator mends the source and runs the same copy again.
        #expect(run(["/usr/bin/sqlite3", source.databasePath,
                     "UPDATE contacts SET note = 'ab' WHERE id = (SELECT max(id) FROM contacts)"]) == 0)
        let retried = try CopyFixture.copy(from, to, in: source.directory)
        #expect(retried.status == 0, "the retry: \(retried.stderr)")
        #expect(retried.stdout.hasPrefix("copied 1 accounts"), "\(retried.stdout)")
    }
}
