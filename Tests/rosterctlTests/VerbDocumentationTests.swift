import RosterTestSupport
import Testing
@testable import rosterctl

/// The man page and the bash completion know every verb and every action the table has, so a new
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
                       "revoke", "revoke-others", "verify-email", "list"] {
            #expect(completion.contains(action), "completion: \(action)")
        }
        for usage in ["account show", "account password", "account email", "account delete", "account export",
                      "account recovery-codes", "account totp enroll", "account totp confirm", "account totp disable",
                      "sessions revoke", "sessions revoke-others", "recover --username", "recover --email",
                      "account verify-email", "mail list"] {
            #expect(manual.contains(usage) || manual.contains(usage.replacingOccurrences(of: " ", with: "\\fR \\fB")),
                    "man: \(usage)")
        }
        // Every action a verb's table lists (its lower-case words after the verb) can be completed and is in the
        // man page, so a new action cannot ship undocumented either.
        for verb in verbTable.map({ $0.configuration }) {
            for (usage, _) in verb.actions {
                let words = Self.actionWords(usage)
                guard !words.isEmpty else { continue }
                for word in words {
                    #expect(completion.contains(" \(word)") || completion.contains("\"\(word)"), "completion: \(verb.name) \(word)")
                }
                let command = ([verb.name] + words).joined(separator: " ")
                #expect(manual.contains(command) || manual.contains(command.replacingOccurrences(of: " ", with: "\\fR \\fB")),
                        "man: \(command)")
            }
        }
        for variable in ["ROSTER_PASSWORD", "ROSTER_NEW_PASSWORD", "ROSTER_CODE", "ROSTER_RECOVERY_CODE"] {
            #expect(manual.contains(".B $\(variable)"), "man ENVIRONMENT: \(variable)")
        }
    }

    /// `user reset-limit NAME` → `["reset-limit"]`: the lower-case words after the verb, before any argument.
    private static func actionWords(_ usage: String) -> [String] {
        var words: [String] = []
        for word in usage.split(separator: " ").dropFirst() {
            guard !word.hasPrefix("-"), word.allSatisfy({ $0.isLowercase || $0 == "-" }) else { break }
            words.append(String(word))
        }
        return words
    }
}
