import Testing
@testable import RosterCore

@Suite("IniParser")
struct ConfigIniParserTests {
    let path = "/etc/roster/rosterd.conf"

    func entry(_ section: String, _ key: String, _ value: String, line: Int) -> IniEntry {
        IniEntry(section: section, key: key, value: value, path: path, line: line)
    }

    func syntaxError(_ text: String) -> ConfigError? {
        do {
            _ = try IniParser.parse(text, path: path)
            return nil
        } catch {
            return error
        }
    }

    @Test func sectionsKeysAndTrimming() throws {
        let text = """
        [Validation]
          UsernameMinLength  =  8\t
        Preset=hardened

        [Timing]
        DebounceMs=500
        """
        #expect(try IniParser.parse(text, path: path) == [
            entry("Validation", "UsernameMinLength", "8", line: 2),
            entry("Validation", "Preset", "hardened", line: 3),
            entry("Timing", "DebounceMs", "500", line: 6),
        ])
    }

    @Test func commentsAndEmptyLinesAreSkipped() throws {
        let text = """
        # leading comment
        ; another
        [Server]
           # indented comment
        LogLevel=debug
        Socket=/run/x.sock # not a comment: only at line start

        """
        #expect(try IniParser.parse(text, path: path) == [
            entry("Server", "LogLevel", "debug", line: 5),
            entry("Server", "Socket", "/run/x.sock # not a comment: only at line start", line: 6),
        ])
    }

    @Test func valueKeepsEqualsSignsAfterTheFirst() throws {
        #expect(try IniParser.parse("[A]\nK=a=b\nE=\n", path: path) == [
            entry("A", "K", "a=b", line: 2),
            entry("A", "E", "", line: 3),
        ])
    }

    @Test func continuationLinesJoinWithASpace() throws {
        // The systemd.syntax(7) example: comments inside a continuation are dropped.
        let text = """
        [Section B]
        KeyTwo=value 2 \\
               value 2 continued
        [Section C]
        KeyThree=value 3\\
        # this line is ignored
        ; this line is ignored too
               value 3 continued
        After=x
        """
        #expect(try IniParser.parse(text, path: path) == [
            entry("Section B", "KeyTwo", "value 2         value 2 continued", line: 2),
            entry("Section C", "KeyThree", "value 3        value 3 continued", line: 5),
            entry("Section C", "After", "x", line: 9),
        ])
    }

    @Test func escapedBackslashDoesNotContinue() throws {
        #expect(try IniParser.parse("[A]\nK=a\\\\\nL=b\n", path: path) == [
            entry("A", "K", "a\\\\", line: 2),
            entry("A", "L", "b", line: 3),
        ])
    }

    @Test func continuationEndsAtBlankLineAndAtEndOfFile() throws {
        #expect(try IniParser.parse("[A]\nK=a\\\n\nL=b\\", path: path) == [
            entry("A", "K", "a", line: 2),
            entry("A", "L", "b", line: 4),
        ])
    }

    @Test func crlfAndByteOrderMark() throws {
        #expect(try IniParser.parse("\u{FEFF}[A]\r\nK = v\r\nL=w\\\r\n  x\r\n", path: path) == [
            entry("A", "K", "v", line: 2),
            entry("A", "L", "w   x", line: 3),
        ])
    }

    @Test func repeatedSectionsAndKeysAreKeptInOrder() throws {
        #expect(try IniParser.parse("[A]\nK=1\n[B]\nK=2\n[A]\nK=3\n", path: path) == [
            entry("A", "K", "1", line: 2),
            entry("B", "K", "2", line: 4),
            entry("A", "K", "3", line: 6),
        ])
    }

    @Test func nonASCIIBlanksInValuesSurvive() throws {
        #expect(try IniParser.parse("[A]\nK=\u{3000}x\u{00A0}\n", path: path) == [
            entry("A", "K", "\u{3000}x\u{00A0}", line: 2),
        ])
    }

    @Test func keyBeforeAnySectionIsASyntaxError() {
        let error = syntaxError("# hi\nDebounceMs=5\n[Timing]\n")
        #expect(error?.reason == "syntax")
        #expect(error?.line == 2)
        #expect(error?.path == path)
        #expect(error?.description == "\(path):2: syntax: DebounceMs= appears before any [Section] header")
    }

    @Test(arguments: [
        ("[A]\njust words\n", 2),
        ("[A]\n=value\n", 2),
        ("[A\n", 1),
        ("[A] # trailing\n", 1),
        ("[]\n", 1),
        ("[A]\nK=1\nbroken\\\n  continued\n", 3),
    ])
    func malformedLines(text: String, line: Int) {
        let error = syntaxError(text)
        #expect(error?.kind == .syntax)
        #expect(error?.line == line)
        #expect(error?.path == path)
    }

    @Test func errorQuotesAreShortAndOneLine() {
        let error = syntaxError("[A]\n" + String(repeating: "x", count: 200) + "\u{7}\n")
        let detail = error?.detail ?? ""
        #expect(detail.hasSuffix("…'"))
        #expect(detail.count < 150)
        #expect(ConfigError.quote("a\u{1}b") == "'a\\u{1}b'")
    }
}
