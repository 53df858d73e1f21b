import Glibc
import RosterClient
import RosterProtocol  // JSONValue, SocketLocation

let environment = ["ROSTER_SOCKET", "XDG_RUNTIME_DIR", "LC_ALL", "LC_MESSAGES", "LANG"]
    .reduce(into: [String: String]()) { found, name in
        if let value = getenv(name) { found[name] = String(cString: value) }
    }
guard let socketPath = SocketLocation.defaultPath(environment: environment, isRoot: getuid() == 0) else {
    fatalError("set ROSTER_SOCKET or XDG_RUNTIME_DIR")
}
do {
    let connection = try ClientConnection(socketPath: socketPath)
    defer { connection.close() }
    _ = try connection.hello(locale: ClientLocale.fromEnvironment(environment), client: "roster-hello")
    let check = try connection.send("users.check_username", ["username": "alice1"])   // in flight together,
    let contacts = try connection.send("contacts.list")                                 // matched by id
    if case .success(let verdict) = try connection.awaitAnswer(id: check) {
        print(verdict["code"]?.stringValue ?? "")                                       // available, taken, …
    }
    if case .failure(let refusal) = try connection.awaitAnswer(id: contacts) {
        print(refusal.reason, refusal.code, refusal.message)                            // unauthenticated 1030 …
    }
} catch {
    print("roster-hello: \(error)")    // ClientError: daemonNotRunning, permissionDenied, timedOut, …
    exit(1)
}
