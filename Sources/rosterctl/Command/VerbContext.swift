import Glibc
import RosterClient
import RosterProtocol

/// What a verb runs with: the global options, the environment, where the daemon is and how to print.
final class VerbContext {
    let options: GlobalOptions
    let environment: [String: String]
    let locale: String
    let style: Style
    let sessionFile: SessionFile?

    init(options: GlobalOptions, environment: [String: String]) {
        self.options = options
        self.environment = environment
        locale = options.locale ?? ClientLocale.fromEnvironment(environment)
        style = Style.forOutput(1, environment: environment)
        sessionFile = SessionFile.forEnvironment(environment)
    }

    var json: GlobalOptions.JSONMode? { options.json }

    /// The socket to try: `--socket`, `$ROSTER_SOCKET`, then the defaults both programs share.
    func socketPath() throws(CommandFailure) -> String {
        if let path = options.socketPath { return path }
        guard let path = SocketLocation.defaultPath(environment: environment, isRoot: getuid() == 0) else {
            throw CommandFailure(description: "XDG_RUNTIME_DIR is not set; pass --socket PATH or set ROSTER_SOCKET")
        }
        return path
    }

    /// Connects and says hello in the chosen locale; with `resume`, logs in with the stored token if there is one.
    ///
    /// A token the daemon no longer knows (expired, revoked, or from another daemon) is removed, so the next
    /// command does not try it again.
    func connect(resume: Bool = true) throws -> ClientConnection {
        let connection = try ClientConnection(socketPath: socketPath())
        if case .failure(let error) = try connection.hello(locale: locale) {
            throw CommandFailure(description: "session.hello failed: \(error)")
        }
        if resume, let file = sessionFile, let token = file.read() {
            if try connection.resume(token: token) == nil { file.remove() }
        }
        return connection
    }

    /// Connects as the stored session, for commands that only make sense logged in (the contacts).
    ///
    /// Without this check such a command would reach the daemon anonymously and fail with `unauthenticated`,
    /// which tells a person less than what to do about it.
    func connectLoggedIn() throws -> ClientConnection {
        try loggedInSession().connection
    }

    /// `connectLoggedIn`, with the username the stored session belongs to.
    func loggedInSession() throws -> (connection: ClientConnection, username: String) {
        guard let file = sessionFile, let token = file.read() else {
            throw CommandFailure(description: "not logged in; run rosterctl login")
        }
        let connection = try connect(resume: false)
        guard let username = try connection.resume(token: token) else {
            file.remove()
            throw CommandFailure(description: "not logged in (the stored session has expired); run rosterctl login")
        }
        return (connection, username)
    }

    /// Prints a result as JSON in the `--json` mode (short if none was asked for).
    func printJSON(_ value: JSONValue) {
        printLine(render(value, pretty: options.json == .pretty))
    }

    /// Keeps a log-in's token for later commands; a failure is a warning, since the log-in itself worked.
    func storeToken(_ token: String?) {
        guard let token else { return }
        guard let file = sessionFile else {
            writeError("rosterctl: warning: \(SessionFile.Failure.noRuntimeDirectory); this log-in is not kept")
            return
        }
        do {
            try file.write(token)
        } catch {
            writeError("rosterctl: warning: \(error); this log-in is not kept")
        }
    }
}

/// A daemon's error answer, as a command failure that names the verb and the stable reason.
func failure(_ verb: String, _ error: RemoteError) -> CommandFailure {
    CommandFailure(description: "\(verb): \(error.message) (\(error.reason))")
}

extension ClientConnection {
    /// `method`'s result, or the daemon's refusal as a failure naming `verb`.
    func result(_ method: String, _ params: JSONValue = .object([]), verb: String) throws -> JSONValue {
        switch try call(method, params) {
        case .success(let value): return value
        case .failure(let error): throw failure(verb, error)
        }
    }
}
