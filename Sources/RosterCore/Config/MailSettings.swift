/// The `[Mail]` settings: which sendmail-compatible program hands messages to the host's mail system, the sender
/// address, the web front end's address for links, and how long a mailed code lives. A reload applies them.
public struct MailSettings: Equatable, Sendable {
    /// `CodeMinutes=`' range: a minute at least; a day at most, past any greylisting delay and short enough that a
    /// mailed code is no second password.
    public static let codeMinutesRange = 1...1440
    /// `BaseURL=`'s default: roster-web's own default address.
    public static let defaultBaseURL = "http://127.0.0.1:8080"

    /// `Sendmail=`: the absolute path of a sendmail-compatible program, run without a shell; nil (the default)
    /// turns mail off.
    public var sendmail: String?
    /// `From=`: the envelope and header sender; nil means `roster@` and the host name (`defaultFrom(hostName:)`),
    /// which only the daemon's edge can read.
    public var from: String?
    /// `BaseURL=`: where links in mail point, without a trailing slash.
    public var baseURL: String
    /// `CodeMinutes=`: how long a mailed code is valid.
    public var codeMinutes: Int

    public init(sendmail: String? = nil, from: String? = nil, baseURL: String = MailSettings.defaultBaseURL,
                codeMinutes: Int = 15) {
        self.sendmail = sendmail
        self.from = from
        self.baseURL = baseURL
        self.codeMinutes = codeMinutes
    }

    /// Whether mail can be sent at all.
    public var enabled: Bool { sendmail != nil }

    /// The sender in force on a host called `hostName`.
    public func sender(hostName: String) -> String {
        from ?? Self.defaultFrom(hostName: hostName)
    }

    /// `roster@` and the host name; a name that could not be a mail domain (empty, or holding what `addressProblem`
    /// refuses) gives `roster@localhost`.
    public static func defaultFrom(hostName: String) -> String {
        let candidate = "roster@" + hostName
        return hostName.isEmpty || addressProblem(candidate) != nil ? "roster@localhost" : candidate
    }

    /// Why `address` cannot be handed to sendmail as one argument, or nil when it can: it must not be empty, start
    /// with `-` (it would be read as an option) or hold a blank or a control character (it would split, or end a
    /// header). Only this is checked here: whether the address is deliverable is the mail system's question.
    public static func addressProblem(_ address: String) -> String? {
        if address.isEmpty { return "is empty" }
        if address.hasPrefix("-") { return "starts with -" }
        for scalar in address.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator:
                return "holds a blank or a control character"
            default:
                continue
            }
        }
        return nil
    }

    /// Why `address` is no good as `From=`, or nil: an argument sendmail can take (`addressProblem`) of the plain
    /// form `local@domain`, ASCII, without the characters that mean something else in a header (`<>()[],;:"\`).
    static func senderProblem(_ address: String) -> String? {
        if let problem = addressProblem(address) { return problem }
        guard address.unicodeScalars.allSatisfy({ $0.isASCII }) else { return "is not ASCII" }
        guard !address.contains(where: { "<>()[],;:\"\\".contains($0) }) else {
            return "holds one of <>()[],;:\"\\ (write the bare address, without a display name)"
        }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return "is not of the form local@domain" }
        return nil
    }

    /// `BaseURL=` as stored (a trailing `/` removed), or why it is no good: `http://` or `https://` and a host,
    /// printable ASCII without blanks, and no query or fragment, since links append `/recover?…` to it.
    static func baseURLProblem(_ url: String) -> (url: String, problem: String?) {
        var trimmed = Substring(url)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let value = String(trimmed)
        guard value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
            return (value, "holds a blank, a control character or non-ASCII (percent-encode it)")
        }
        let rest: Substring
        if value.hasPrefix("http://") {
            rest = value.dropFirst("http://".count)
        } else if value.hasPrefix("https://") {
            rest = value.dropFirst("https://".count)
        } else {
            return (value, "does not start with http:// or https://")
        }
        guard let host = rest.split(separator: "/", omittingEmptySubsequences: false).first, !host.isEmpty else {
            return (value, "names no host")
        }
        guard !value.contains("?"), !value.contains("#") else { return (value, "holds a query or a fragment") }
        return (value, nil)
    }
}
