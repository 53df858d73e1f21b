extension FieldName {
    /// The placeholder values this field's messages quote (`{min}`, `{max}`), from the policy in force.
    /// Also pass them when localizing `RosterError.invalidField` for this field.
    public func messageArguments(policy: Policy) -> [String: String] {
        switch self {
        case .username: ["min": String(policy.usernameMinLength), "max": String(policy.usernameMaxLength)]
        case .password, .new: ["min": String(policy.passwordMinLength), "max": String(policy.passwordMaxLength)]
        case .email: ["max": String(EmailRules.maxLength)]
        case .confirm, .query, .current, .code: [:]
        }
    }
}

extension FormEvent {
    /// The event's localized `message`; `form` events have none.
    public func message(locale: RosterLocale, policy: Policy) -> String? {
        guard let key = messageKey else { return nil }
        switch self {
        case .field(_, let field, _, _, _, _):
            return MessageCatalog.text(key, locale: locale, arguments: field.messageArguments(policy: policy))
        case .form, .submit:
            return MessageCatalog.text(key, locale: locale)
        }
    }
}
