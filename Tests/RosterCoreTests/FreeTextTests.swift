import RosterCore
import Testing

/// `FreeText`: what free text a peer may store (a client's name, a lock's reason), and how any text is shown.
@Suite("Free text")
struct FreeTextTests {
    /// Each refused character, at the start, middle and end of an otherwise fine text.
    static let refused: [(String, Unicode.Scalar)] = [
        ("NUL", "\u{0}"), ("tab", "\t"), ("newline", "\n"), ("carriage return", "\r"), ("ESC", "\u{1B}"), ("US", "\u{1F}"),
        ("DEL", "\u{7F}"), ("C1 PAD", "\u{80}"), ("NEL", "\u{85}"), ("CSI", "\u{9B}"), ("APC", "\u{9F}"),
        ("ALM", "\u{61C}"), ("LRM", "\u{200E}"), ("RLM", "\u{200F}"), ("line separator", "\u{2028}"),
        ("paragraph separator", "\u{2029}"), ("LRE", "\u{202A}"), ("RLE", "\u{202B}"), ("PDF", "\u{202C}"),
        ("LRO", "\u{202D}"), ("RLO", "\u{202E}"), ("LRI", "\u{2066}"), ("RLI", "\u{2067}"), ("FSI", "\u{2068}"),
        ("PDI", "\u{2069}"),
    ]

    @Test func everyControlLineBreakAndBidiControlIsRefusedWherever() {
        for (name, scalar) in Self.refused {
            let c = String(Character(scalar))
            for text in [c, "a" + c, c + "a", "rosterctl" + c + "1.0"] {
                #expect(FreeText.problem(text, maxLength: 128) == .controlCharacter, "\(name) in \(text.debugDescription)")
            }
        }
    }

    @Test func ordinaryTextOfAnyScriptIsKept() {
        for text in ["", "rosterctl 1.4", "roster-web (Mozilla/5.0; X11)", "张三的电脑", "Nguyễn Văn Ánh", "한국어 클라이언트",
                     "עברית", "عربي ١٢٣", "emoji 🙂👍🏽", "a\u{301}", "zero\u{200B}width", "NBSP\u{A0}here", "\u{A0}", "\u{FEFF}x",
                     "back\\slash", "tab-like \u{2003} em space"] {
            #expect(FreeText.problem(text, maxLength: 128) == nil, "\(text.debugDescription)")
        }
    }

    /// Unicode scalars, not grapheme clusters: a letter with 200 combining marks is one character on screen but 201
    /// scalars, and it is too long for 128.
    @Test func lengthIsCountedInUnicodeScalarsAtTheCapAndOnePast() {
        for unit in ["a", "张", "🙂", "e\u{301}"] {
            let scalars = unit.unicodeScalars.count
            let atCap = String(repeating: unit, count: 128 / scalars)
            #expect(atCap.unicodeScalars.count == 128)
            #expect(FreeText.problem(atCap, maxLength: 128) == nil, "\(unit)")
            #expect(FreeText.problem(atCap + "x", maxLength: 128) == .tooLong, "\(unit)")
        }
        let zalgo = "a" + String(repeating: "\u{301}", count: 200)
        #expect(zalgo.count == 1)
        #expect(FreeText.problem(zalgo, maxLength: 128) == .tooLong)
        #expect(FreeText.problem(String(repeating: "x", count: 65_536), maxLength: 128) == .tooLong)
        #expect(FreeText.problem(String(repeating: "x", count: 200), maxLength: FreeText.lockReasonMaxLength) == nil)
        #expect(FreeText.problem(String(repeating: "x", count: 201), maxLength: FreeText.lockReasonMaxLength) == .tooLong)
        #expect(FreeText.clientMaxLength == 128)
    }

    /// Too long is judged first: a long text full of newlines answers `too_long`.
    @Test func tooLongWinsOverAControlCharacter() {
        #expect(FreeText.problem(String(repeating: "\n", count: 129), maxLength: 128) == .tooLong)
        #expect(FreeText.problem(String(repeating: "\n", count: 128), maxLength: 128) == .controlCharacter)
    }

    @Test func theReasonsAreStable() {
        #expect(FreeText.Problem.tooLong.rawValue == "too_long")
        #expect(FreeText.Problem.controlCharacter.rawValue == "control_character")
        #expect(ParamProblem(FreeText.Problem.tooLong).rawValue == "too_long")
        #expect(ParamProblem(FreeText.Problem.controlCharacter).rawValue == "control_character")
        #expect(RosterError.refusedFreeText("a\nb", param: "client", maxLength: 128)
                == .invalidParams(param: "client", problem: .controlCharacter))
        #expect(RosterError.refusedFreeText("fine", param: "client", maxLength: 128) == nil)
    }

    @Test func escapingShowsEveryRefusedCharacterVisiblyAndNothingElse() {
        let cases: [(String, String)] = [
            ("a\nb", "a\\nb"), ("a\tb\rc", "a\\tb\\rc"), ("\u{1B}[8mhidden\u{1B}[0m", "\\u{1b}[8mhidden\\u{1b}[0m"),
            ("x\u{7F}\u{85}\u{9B}", "x\\u{7f}\\u{85}\\u{9b}"), ("user\u{202E}gpj.exe", "user\\u{202e}gpj.exe"),
            ("\u{2066}a\u{2069}\u{200E}\u{200F}\u{61C}", "\\u{2066}a\\u{2069}\\u{200e}\\u{200f}\\u{61c}"),
            ("a\u{2028}b", "a\\u{2028}b"), ("C:\\new", "C:\\\\new"), ("张三 🙂", "张三 🙂"), ("عربي", "عربي"), ("", ""),
        ]
        for (text, shown) in cases {
            #expect(FreeText.escaped(text) == shown, "\(text.debugDescription)")
        }
        // Whatever the text, what is shown holds no refused character and no line break.
        for (_, scalar) in Self.refused {
            #expect(!FreeText.escaped("a\(scalar)b").unicodeScalars.contains(where: FreeText.isRefused))
        }
    }
}
