/// A verb's own arguments, split into flags, options with values and positionals against what the verb declares.
struct VerbArguments {
    private(set) var flags: Set<String> = []
    private(set) var values: [String: String] = [:]
    private(set) var positionals: [String] = []

    /// - Parameters:
    ///   - flags: options without a value, e.g. `--password-stdin`.
    ///   - valued: options that take one, as `--name VALUE` or `--name=VALUE`.
    init(_ arguments: [String], verb: String, flags known: Set<String> = [], valued: Set<String> = []) throws(UsageError) {
        var iterator = arguments.makeIterator()
        var optionsEnded = false
        while let argument = iterator.next() {
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let (name, inline) = splitOption(argument)
            if known.contains(name) {
                guard inline == nil else { throw UsageError(description: "\(verb): \(name) takes no value") }
                flags.insert(name)
            } else if valued.contains(name) {
                guard let value = inline ?? iterator.next() else { throw UsageError(description: "\(verb): \(name) needs a value") }
                values[name] = value
            } else {
                throw UsageError(description: "\(verb): unknown option '\(argument)'; see rosterctl --help")
            }
        }
    }

    func positionals(min: Int, max: Int, verb: String, usage: String) throws(UsageError) -> [String] {
        guard positionals.count >= min, positionals.count <= max else {
            throw UsageError(description: "usage: rosterctl \(usage)")
        }
        return positionals
    }
}
