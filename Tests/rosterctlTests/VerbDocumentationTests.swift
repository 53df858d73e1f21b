import RosterTestSupport
import Testing
@testable import rosterctl

/// The man page and the bash completion know every verb and every account action the table has, so a new
/// command cannot ship undocumented or uncompletable.
@Suite("rosterctl's man page and completion")
struct VerbDocumentationTests {
    @Test func everyVerbIsInTheManPageAndTheCompletion() throws {
        let tree = SourceTree()
        let manual = try #require(tree.text(of: "man/rosterctl.1")).replacingOccurrences(of: "\\-", with: "-")
        let completion = try #require(tree.text(of: "shell/rosterctl.bash"))
        let verbsLine = try #require(completion.split(separator: "\n").first { $0.contains("local verbs=") })
        for name in verbTable.map { $0.configuration.name } {
            #expect(manual.contains(".B \(name)") || manual.contains("\\fB\(name)") || manual.contains(".BI \"\(name)")
                || manual.contains(".BR \(name)") || manual.contains(".BI \(name)"), "man: \(name)")
            #expect(verbsLine.split(whereSeparator: { $0 == " " || $0 == "\"" }).contains(Substring(name)), "completion: \(name)")
        }
        for action in ["show", "password", "email", "delete", "export", "recovery-codes", "totp", "enroll", "confirm", "disable",
                       "revoke", "revoke-others"] {
            #expect(completion.contains(action), "completion: \(action)")
        }
        for usage in ["account show", "account password", "account email", "account delete", "account export",
                      "account recovery-codes", "account totp enroll", "account totp confirm", "account totp disable",
                      "sessions revoke", "sessions revoke-others", "recover --username"] {
            #expect(manual.contains(usage) || manual.contains(usage.replacingOccurrences(of: " ", with: "\\fR \\fB")),
                    "man: \(usage)")
        }
        for variable in ["ROSTER_PASSWORD", "ROSTER_NEW_PASSWORD", "ROSTER_CODE", "ROSTER_RECOVERY_CODE"] {
            #expect(manual.contains(".B $\(variable)"), "man ENVIRONMENT: \(variable)")
        }
    }
}
