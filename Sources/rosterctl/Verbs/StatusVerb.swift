import RosterClient
import RosterProtocol

/// `rosterctl status`: the daemon's name, version, uptime, sessions and users.
///
/// The counters come from `admin.stats`, which only root and the daemon's own user may read; anyone else
/// still gets what `session.hello` tells every client, with the counters shown as `-`.
struct StatusVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "status", usage: "status", summary: "Show the daemon's version, uptime, sessions and users", group: .daemon)

    init(arguments: [String]) throws(UsageError) {
        _ = try VerbArguments(arguments, verb: "status").positionals(min: 0, max: 0, verb: "status", usage: Self.configuration.usage)
    }

    func run(_ context: VerbContext) throws -> Int32 {
        let connection = try ClientConnection(socketPath: context.socketPath())
        let hello: JSONValue
        switch try connection.hello(locale: context.locale) {
        case .success(let value): hello = value
        case .failure(let error): throw failure("status", error)
        }
        var stats: JSONValue?
        switch try connection.call("admin.stats") {
        case .success(let value): stats = value
        case .failure(let error) where error.reason == "forbidden": stats = nil
        case .failure(let error): throw failure("status", error)
        }
        if context.json != nil {
            context.printJSON(["server": hello["server"] ?? .null, "version": hello["version"] ?? .null,
                               "protocol": hello["protocol"] ?? .null, "stats": stats ?? .null])
            return 0
        }
        var table = Table(columns: ["SERVER", "VERSION", "PROTOCOL", "UPTIME", "SESSIONS", "USERS", "CONNECTIONS"])
        table.rows.append([
            hello["server"]?.stringValue ?? "-", hello["version"]?.stringValue ?? "-",
            hello["protocol"].map { $0.description } ?? "-",
            stats?["uptime_ms"]?.int64Value.map(formatUptime) ?? "-",
            stats?["sessions"].map { $0.description } ?? "-", stats?["users"].map { $0.description } ?? "-",
            stats?["connections"].map { $0.description } ?? "-",
        ])
        table.render(legend: !context.options.noLegend, style: context.style).forEach(printLine)
        if stats == nil && !context.options.noLegend {
            writeError("rosterctl: counters are only shown to root and the daemon's own user")
        }
        return 0
    }
}

/// Uptime the way systemctl writes it: `2h 3min 4s`, `850ms` below a second.
func formatUptime(_ milliseconds: Int64) -> String {
    guard milliseconds >= 1000 else { return "\(milliseconds)ms" }
    var seconds = milliseconds / 1000
    let days = seconds / 86_400
    seconds %= 86_400
    let hours = seconds / 3600
    seconds %= 3600
    let minutes = seconds / 60
    seconds %= 60
    var parts: [String] = []
    if days > 0 { parts.append("\(days)d") }
    if hours > 0 { parts.append("\(hours)h") }
    if minutes > 0 { parts.append("\(minutes)min") }
    if seconds > 0 || parts.isEmpty { parts.append("\(seconds)s") }
    return parts.joined(separator: " ")
}
