import RosterPostgres
@testable import RosterSQLite
import RosterStorage
import Testing

/// One list of schema steps for every backend: each backend's history follows it in order, has a migration
/// for every step (or says which earlier migration made it), and nothing more.
@Suite("Schema steps")
struct SchemaStepTests {
    @Test func sqliteHasOneMigrationPerStepInTheStepsOrder() {
        let supplied = SchemaStep.allCases.map { RosterSchema.migration(for: $0)?.name }
        #expect(!supplied.contains(nil))
        #expect(RosterSchema.migrations.map(\.name) == supplied.compactMap { $0 })
        #expect(RosterSchema.migrations.map(\.name) == ["0001_users", "0002_session_tokens", "0003_login_failures",
                                                       "0004_contacts", "0005_contacts_by_folded_name",
                                                       "0006_account_life", "0007_admin_users", "0008_audit",
                                                       "0009_audit_remote", "0010_key_check", "0011_mail",
                                                       "0012_passkeys", "0013_audit_method", "0014_contact_cards", "0015_app_passwords"])
    }

    @Test func postgresFollowsTheStepsAndMadeOnlyTheFoldedNameIndexEarlier() {
        let missing = SchemaStep.allCases.filter { PostgreSQLSchema.migration(for: $0) == nil }
        #expect(missing == [.contactsByFoldedName])
        #expect(PostgreSQLSchema.migrations.map(\.name)
                == SchemaStep.allCases.compactMap { PostgreSQLSchema.migration(for: $0)?.name })
        #expect(PostgreSQLSchema.migration(for: .contacts)?.statements.contains {
            $0.contains("contacts_user_folded")
        } == true)
    }

    /// Names are a backend's history: numbered in order from 0001, never twice, with no gap but a number held for
    /// a step a parallel branch lands before the ones after it (the contacts' CardDAV step: SQLite 0014,
    /// PostgreSQL 0013, before the app passwords' 0015 and 0014). The migrator goes by the list's order and names,
    /// never by the number, so the list is right whether or not that step has landed yet.
    @Test(arguments: [(RosterSchema.migrations.map(\.name), [14]), (PostgreSQLSchema.migrations.map(\.name), [13])])
    func namesAreNumberedInOrder(_ names: [String], held: [Int]) {
        #expect(Set(names).count == names.count)
        var expected = 1
        for name in names {
            let number = Int(name.prefix(4)) ?? 0
            while number != expected, held.contains(expected) { expected += 1 }
            #expect(name.hasPrefix(String(repeating: "0", count: 4 - String(expected).count) + String(expected) + "_"),
                    "\(name)")
            expected += 1
        }
    }
}
