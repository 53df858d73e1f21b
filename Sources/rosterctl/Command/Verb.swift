/// How a verb appears in `--help` and how the table finds it.
struct VerbConfiguration {
    /// Sections of `--help`, in the order they are printed.
    enum Group: String, CaseIterable {
        case session = "Session Commands"
        case account = "Account Commands"
        case users = "User Commands"
        case contacts = "Contact Commands"
        case daemon = "Daemon Commands"
    }

    let name: String
    let usage: String
    let summary: String
    let group: Group
    /// The verb's own options, one `(spelling, explanation)` per line, for `rosterctl VERB --help`.
    var options: [(String, String)] = []
    /// A verb with actions (`contacts list`, `contacts add`, …) lists each as `(usage, summary)`; `--help` shows
    /// these lines instead of the single `usage`.
    var actions: [(String, String)] = []
}

/// One rosterctl command: parsed from its arguments, checked, then run against a context.
protocol Verb {
    static var configuration: VerbConfiguration { get }
    init(arguments: [String]) throws(UsageError)
    /// Mistakes that need the global options or the environment to see (exit 2 before any connection).
    func validate(_ context: VerbContext) throws(UsageError)
    /// Does the work and returns the exit status; thrown errors are reported by main.
    func run(_ context: VerbContext) throws -> Int32
}

extension Verb {
    func validate(_ context: VerbContext) throws(UsageError) {}
}

/// Every verb, in help order; main dispatches by `configuration.name`.
var verbTable: [any Verb.Type] {
    [
        RegisterVerb.self,
        LoginVerb.self,
        LogoutVerb.self,
        WhoamiVerb.self,
        AccountVerb.self,
        SessionsVerb.self,
        PasskeyVerb.self,
        AppPasswordVerb.self,
        RecoverVerb.self,
        CheckUsernameVerb.self,
        UserVerb.self,
        AuditVerb.self,
        ContactsVerb.self,
        StatusVerb.self,
        MailVerb.self,
        WatchVerb.self,
        CallVerb.self,
    ]
}

func findVerb(_ name: String) -> (any Verb.Type)? {
    verbTable.first { $0.configuration.name == name }
}

/// A failure the user should read: printed as `rosterctl: message`, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    var status: Int32 = 1
}
