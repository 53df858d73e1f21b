/// The message language a client asks for, chosen from the POSIX locale variables without Foundation.
///
/// Written here rather than borrowed from RosterCore so the client's start-up never needs more than Glibc;
/// it follows the same rule as the daemon's `RosterLocale(tag:)`: match on the language, refuse Traditional Chinese.
public enum ClientLocale {
    public static let supported = ["zh-Hans", "en", "vi", "ko"]

    /// zh-Hans, en, vi or ko for a tag such as `zh_CN.UTF-8`, `en-US` or `ko`; nil for anything else.
    public static func map(_ tag: String) -> String? {
        let name = tag.split(separator: ".").first.map(String.init) ?? tag
        let base = name.split(separator: "@").first.map(String.init) ?? name
        let parts = base.lowercased().split(whereSeparator: { $0 == "_" || $0 == "-" }).map(String.init)
        guard let language = parts.first else { return nil }
        switch language {
        case "zh":
            let traditional = ["hant", "tw", "hk", "mo"]
            return parts.contains(where: traditional.contains) ? nil : "zh-Hans"
        case "en": return "en"
        case "vi": return "vi"
        case "ko": return "ko"
        default: return nil
        }
    }

    /// The first set one of LC_ALL, LC_MESSAGES, LANG (POSIX precedence), mapped; `en` for C, POSIX or
    /// a language the daemon does not speak, since an untranslated locale means English on Unix.
    public static func fromEnvironment(_ environment: [String: String]) -> String {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment[key], !value.isEmpty else { continue }
            return map(value) ?? "en"
        }
        return "en"
    }
}
