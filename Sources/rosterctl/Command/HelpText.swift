import RosterProtocol

/// `--help`, grouped by what the commands are about, in systemctl's layout.
func helpText() -> String {
    var lines = ["rosterctl [OPTIONS...] COMMAND ...", "", "Talk to rosterd, the Roster account and contacts daemon."]
    for group in VerbConfiguration.Group.allCases {
        lines += ["", "\(group.rawValue):"]
        for verb in verbTable where verb.configuration.group == group {
            let configuration = verb.configuration
            let entries = configuration.actions.isEmpty ? [(configuration.usage, configuration.summary)] : configuration.actions
            lines += entries.map { helpLine($0.0, $0.1) }
        }
    }
    lines += ["", "Options:",
              helpLine("-h --help", "Show this help (after a COMMAND: that command's help)"),
              helpLine("   --version", "Show the version"),
              helpLine("   --socket PATH", "Talk to the daemon on PATH (default: $ROSTER_SOCKET, else"),
              helpLine("", "/run/roster/roster.sock as root, else $XDG_RUNTIME_DIR/roster/roster.sock)"),
              helpLine("   --json=short|pretty", "Print results as JSON"),
              helpLine("   --no-legend", "Do not print table headers"),
              helpLine("   --locale LANG", "Messages in zh-Hans, en, vi or ko (default: from LC_ALL,"),
              helpLine("", "LC_MESSAGES or LANG)"),
              "", "Passwords and codes are read from a prompt, --password-stdin (one per line) or $ROSTER_PASSWORD,",
              "$ROSTER_NEW_PASSWORD, $ROSTER_CODE and $ROSTER_RECOVERY_CODE, never from arguments.",
              "A log-in is kept in $XDG_RUNTIME_DIR/roster/session until logout.",
              "Exit status: 0 success, 1 failure, 2 usage error, 130 interrupted."]
    return lines.joined(separator: "\n")
}

/// One command's usage and options, for `rosterctl COMMAND --help`.
func verbHelpText(_ configuration: VerbConfiguration) -> String {
    var lines = ["rosterctl [OPTIONS...] \(configuration.usage)", "", configuration.summary + "."]
    if !configuration.actions.isEmpty {
        lines += ["", "Commands:"] + configuration.actions.map { helpLine($0.0, $0.1) }
    }
    if !configuration.options.isEmpty {
        lines += ["", "Options:"] + configuration.options.map { helpLine("   " + $0.0, $0.1) }
    }
    lines += ["", "See rosterctl --help for the global options."]
    return lines.joined(separator: "\n")
}

private func helpLine(_ left: String, _ right: String) -> String {
    let column = "  " + left
    return displayWidth(column) >= 34 ? column + "\n" + String(repeating: " ", count: 35) + right : column.padding(35) + right
}
