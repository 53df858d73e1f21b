/// The languages a session's messages come in; `code` and `reason` never change with it.
public enum RosterLocale: String, CaseIterable, Sendable {
    case zhHans = "zh-Hans"
    case en
    case vi
    case ko

    /// The seeds are Chinese, so their own texts are the default.
    public static let `default` = RosterLocale.zhHans

    /// Accepts a BCP 47 tag or a POSIX locale name (`en-US`, `zh_CN.UTF-8`, `ko`), matching on the language.
    public init?(tag: String) {
        let trimmed = tag.split(separator: ".").first.map(String.init) ?? tag
        let parts = trimmed.replacingUnderscores().lowercased().split(separator: "-").map(String.init)
        guard let language = parts.first else { return nil }
        switch language {
        case "zh":
            // Traditional-script tags are not served: pretending they are Simplified would mislead the reader.
            if parts.contains("hant") || parts.contains("tw") || parts.contains("hk") || parts.contains("mo") {
                return nil
            }
            self = .zhHans
        case "en": self = .en
        case "vi": self = .vi
        case "ko": self = .ko
        default: return nil
        }
    }
}

private extension String {
    func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}
