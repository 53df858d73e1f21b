import Glibc

/// How text is decorated: ANSI attributes on a terminal, nothing when piped, under NO_COLOR or TERM=dumb.
struct Style: Equatable {
    /// One run of text's look; `colour` is dropped under NO_COLOR while bold/dim/reverse stay (they are not colour).
    struct Attributes: Equatable {
        enum Colour: Int { case red = 31, green = 32, yellow = 33, cyan = 36 }
        var colour: Colour?
        var bold = false
        var dim = false
        var reverse = false

        static let plain = Attributes()
        static func colour(_ colour: Colour) -> Attributes { Attributes(colour: colour) }
        static let dim = Attributes(dim: true)
        static let bold = Attributes(bold: true)
    }

    /// Any escape sequence at all (off when piped or TERM=dumb).
    let attributes: Bool
    /// Colour on top of that (off under NO_COLOR).
    let colour: Bool

    static let none = Style(attributes: false, colour: false)

    /// The style for `fd` in this environment.
    static func forOutput(_ fd: Int32, environment: [String: String]) -> Style {
        let terminal = isatty(fd) == 1 && environment["TERM"] != "dumb"
        let noColour = !(environment["NO_COLOR"] ?? "").isEmpty
        return Style(attributes: terminal, colour: terminal && !noColour)
    }

    func paint(_ text: String, _ look: Attributes) -> String {
        guard attributes, look != .plain else { return text }
        var codes: [String] = []
        if look.bold { codes.append("1") }
        if look.dim { codes.append("2") }
        if look.reverse { codes.append("7") }
        if colour, let hue = look.colour { codes.append(String(hue.rawValue)) }
        guard !codes.isEmpty else { return text }
        return "\u{1B}[" + codes.joined(separator: ";") + "m" + text + "\u{1B}[0m"
    }
}
