/// The `[Mail]` settings: which sendmail-compatible program hands messages to the host's mail system, the sender,
/// the web front end's address for links, and how long a mailed code lives. A reload applies them.
///
/// The sender and the links' base are held as the mail values themselves (`MailMailbox`, `MailBaseURL`), so the
/// configuration and the mails share one parser and a value the configuration took can always be written.
public struct MailSettings: Equatable, Sendable {
    /// `CodeMinutes=`' range: a minute at least; a day at most, past any greylisting delay and short enough that a
    /// mailed code is no second password.
    public static var codeMinutesRange: ClosedRange<Int> { MailComposer.codeMinutesRange }
    /// `BaseURL=`'s default: roster-web's own default address.
    public static let defaultBaseURL = MailBaseURL(known: "http://127.0.0.1:8080")

    /// `Sendmail=`: the absolute path of a sendmail-compatible program, run without a shell; nil (the default)
    /// turns mail off.
    public var sendmail: String?
    /// `From=`: the envelope and header sender; nil means `roster@` and the host name (`defaultFrom(hostName:)`),
    /// which only the daemon's edge can read.
    public var from: MailMailbox?
    /// `BaseURL=`: where links in mail point.
    public var baseURL: MailBaseURL
    /// `CodeMinutes=`: how long a mailed code is valid.
    public var codeMinutes: Int

    public init(sendmail: String? = nil, from: MailMailbox? = nil, baseURL: MailBaseURL = MailSettings.defaultBaseURL,
                codeMinutes: Int = MailComposer.defaultCodeMinutes) {
        self.sendmail = sendmail
        self.from = from
        self.baseURL = baseURL
        self.codeMinutes = codeMinutes
    }

    /// Whether mail can be sent at all.
    public var enabled: Bool { sendmail != nil }

    /// The sender in force on a host called `hostName`.
    public func sender(hostName: String) -> MailMailbox {
        from ?? Self.defaultFrom(hostName: hostName)
    }

    /// What every mail of a daemon on `hostName` is written with. Throws only for a `codeMinutes` set in code
    /// outside `codeMinutesRange` (the configuration never takes one).
    public func composer(hostName: String) throws(MailMessageError) -> MailComposer {
        try MailComposer(from: sender(hostName: hostName), baseURL: baseURL, codeMinutes: codeMinutes)
    }

    /// `roster@` and the host name; a name that could not be a mail domain (empty, or not a host name as
    /// `MailAddress` reads one) gives `roster@localhost`.
    public static func defaultFrom(hostName: String) -> MailMailbox {
        guard !hostName.isEmpty, let address = try? MailAddress(parsing: "roster@" + hostName) else {
            return MailMailbox(address: MailAddress(known: "roster@localhost", domain: "localhost"))
        }
        return MailMailbox(address: address)
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
}
