/// Why a mail could not be put together; `reason` is stable (the outbox's last error, a journal field).
///
/// Every value that reaches a header is checked before it is written, so a refused value is reported here
/// instead of ever becoming a header line of its own.
public enum MailMessageError: Error, Equatable, Hashable, Sendable {
    /// An address holds a line break or another control character (the way a header is injected).
    case addressHasControl
    /// An address holds a character outside ASCII; without SMTPUTF8 no mail system is bound to carry it.
    case addressNotASCII
    /// An address is longer than RFC 5321 lets a path be (254), or its local part than 64.
    case addressTooLong
    /// An address is not `local@domain` with a dot-atom local part and a host name as domain.
    case addressMalformed
    /// A text that names something in a header or body (a username, a display name) holds a control character.
    case textHasControl(MailTextField)
    /// `Name <address>` as the configuration writes a mailbox, but not in that shape.
    case mailboxMalformed
    /// A mailed code is not exactly six ASCII digits.
    case codeMalformed
    /// The code's validity is outside 1...1440 minutes.
    case codeMinutesOutOfRange
    /// The links' base is not an `http://` or `https://` address without spaces, query or fragment.
    case baseURLMalformed
    /// A Message-ID needs 8 to 64 bytes that make it unique, and a host name after its `@`.
    case messageIDMalformed

    /// The stable snake_case name of this failure.
    public var reason: String {
        switch self {
        case .addressHasControl: "address_has_control"
        case .addressNotASCII: "address_not_ascii"
        case .addressTooLong: "address_too_long"
        case .addressMalformed: "address_malformed"
        case .textHasControl(let field): "\(field.rawValue)_has_control"
        case .mailboxMalformed: "mailbox_malformed"
        case .codeMalformed: "code_malformed"
        case .codeMinutesOutOfRange: "code_minutes_out_of_range"
        case .baseURLMalformed: "base_url_malformed"
        case .messageIDMalformed: "message_id_malformed"
        }
    }
}

/// Which text of a mail a control character was found in.
public enum MailTextField: String, Hashable, Sendable, CaseIterable {
    case username
    case displayName = "display_name"
}
