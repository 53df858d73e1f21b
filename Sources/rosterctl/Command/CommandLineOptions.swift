import RosterClient

/// The options every verb shares, in systemd's ctl style.
struct GlobalOptions {
    /// How `--json` asked for output, if it did.
    enum JSONMode: String {
        case short
        case pretty
    }

    var socketPath: String?
    var json: JSONMode?
    var noLegend = false
    var locale: String?
    var showHelp = false
    var showVersion = false
}

/// A mistake in how rosterctl was called: reported with exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
}

/// Splits argv into global options and the verb with its own arguments.
///
/// Global options are recognised before and after the verb, as systemctl does; other options after the verb
/// belong to it. Before the verb an unknown option is a mistake. `--` ends option parsing.
func parseCommandLine(_ arguments: [String]) throws(UsageError) -> (GlobalOptions, [String]) {
    var options = GlobalOptions()
    var rest: [String] = []
    var iterator = arguments.makeIterator()
    var optionsEnded = false
    while let argument = iterator.next() {
        if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
            rest.append(argument)
            continue
        }
        if argument == "--" {
            optionsEnded = true
            if !rest.isEmpty { rest.append(argument) }
            continue
        }
        let (name, inline) = splitOption(argument)
        switch name {
        case "-h", "--help": options.showHelp = true
        case "--version": options.showVersion = true
        case "--no-legend": options.noLegend = true
        case "--socket":
            guard let value = inline ?? iterator.next() else { throw UsageError(description: "--socket needs a path") }
            options.socketPath = value
        case "--locale":
            guard let value = inline ?? iterator.next() else { throw UsageError(description: "--locale needs a language") }
            guard let locale = ClientLocale.map(value) else {
                throw UsageError(description: "--locale takes zh-Hans, en, vi or ko, not '\(value)'")
            }
            options.locale = locale
        case "--json":
            let value = inline ?? "short"
            guard let mode = GlobalOptions.JSONMode(rawValue: value) else {
                throw UsageError(description: "--json takes short or pretty, not '\(value)'")
            }
            options.json = mode
        default:
            guard !rest.isEmpty else { throw UsageError(description: "unknown option '\(argument)'; see rosterctl --help") }
            rest.append(argument)
        }
    }
    return (options, rest)
}

func splitOption(_ argument: String) -> (String, String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
}
