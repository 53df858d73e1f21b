import RosterTestSupport
import Testing

/// What the repository's own documents say agrees with what it does: README's package lists are the Makefile's,
/// and every section of protocol.md a source or a test cites (its heading after `protocol.md` and `§`) is there.
@Suite("The documents tell the truth")
struct DocumentationTests {
    @Test func readmeListsEveryPackageTheMakefileInstallsAndNoOther() throws {
        let tree = SourceTree()
        let makefile = try #require(tree.text(of: "Makefile"))
        let readme = try #require(tree.text(of: "README.md"))
        let variables = Self.variables(in: makefile)
        let installed = Self.installedVariables(in: makefile)
        #expect(installed == ["PACKAGES", "PYTHON_PACKAGES", "TEST_PACKAGES"], "the Makefile installs \(installed)")
        let listed = Self.listedPackages(in: readme)
        #expect(Set(listed.map(\.variable)) == Set(installed), "README names the lists \(listed.map(\.variable))")
        for (variable, packages) in listed {
            #expect(packages == variables[variable], "README's `\(variable)` is \(packages), the Makefile's \(variables[variable] ?? [])")
        }
    }

    @Test func everyCitedSectionOfProtocolMdIsOneOfItsHeadings() throws {
        let tree = SourceTree()
        let protocolText = try #require(tree.text(of: "protocol.md"))
        let headings = protocolText.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("## ") || line.hasPrefix("### ") else { return nil }
            return String(line.drop { $0 == "#" }.dropFirst())
        }
        #expect(headings.contains("Errors"), "the check would be vacuous: protocol.md has no headings")
        var unknown: [String] = []
        for directory in ["Sources", "Tests"] {
            for file in tree.swiftFiles(under: directory) {
                for citation in Self.citations(in: file.text) where !Self.names(citation, oneOf: headings) {
                    unknown.append("\(file.path): \(Self.mark)\(citation.prefix(40))")
                }
            }
        }
        #expect(unknown.isEmpty, "no such heading in protocol.md: \(unknown)")
    }

    /// `NAME := words \` and its continuation lines, as make reads them.
    static func variables(in makefile: String) -> [String: [String]] {
        var found: [String: [String]] = [:]
        var current: String?
        for line in makefile.split(separator: "\n", omittingEmptySubsequences: false) {
            var text = Substring(line)
            if current == nil {
                guard let assign = text.firstRange(of: ":="), case let name = text[..<assign.lowerBound].filter({ $0 != " " }),
                      !name.isEmpty, name.allSatisfy({ $0.isUppercase || $0 == "_" }) else { continue }
                current = name
                text = text[assign.upperBound...]
            }
            guard let name = current else { continue }
            let continued = text.hasSuffix("\\")
            if continued { text = text.dropLast() }
            found[name, default: []] += text.split(separator: " ").map(String.init)
            if !continued { current = nil }
        }
        return found
    }

    /// The variables the Makefile hands to `install-missing`.
    static func installedVariables(in makefile: String) -> [String] {
        makefile.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.firstRange(of: "$(call install-missing,$(") else { return nil }
            return line[start.upperBound...].split(separator: ")").first.map(String.init)
        }.sorted()
    }

    /// README's package lists: a code span followed by "(`VARIABLE`)" or "(the Makefile's `VARIABLE`)".
    static func listedPackages(in readme: String) -> [(variable: String, packages: [String])] {
        let pieces = readme.split(separator: "`", omittingEmptySubsequences: false)
        var lists: [(variable: String, packages: [String])] = []
        var index = 1
        while index + 2 < pieces.count {
            let between = pieces[index + 1].split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let name = pieces[index + 2]
            if between == "(" || between == "(the Makefile's", !name.isEmpty,
               name.allSatisfy({ $0.isUppercase || $0 == "_" }) {
                lists.append((String(name), pieces[index].split(whereSeparator: \.isWhitespace).map(String.init)))
            }
            index += 2
        }
        return lists
    }

    /// How a citation starts, spelled in two parts so that this file does not cite a section itself.
    static let mark = "protocol.md " + "§"

    /// What follows each citation mark (`protocol.md`, a space and `§`) in some text, to the end of its line.
    static func citations(in text: String) -> [Substring] {
        var found: [Substring] = []
        var rest = Substring(text)
        while let mark = rest.firstRange(of: Self.mark) {
            let tail = rest[mark.upperBound...]
            found.append(tail.prefix { $0 != "\n" })
            rest = tail
        }
        return found
    }

    /// Whether a citation starts with one of the headings, ending where the heading ends.
    static func names(_ citation: Substring, oneOf headings: [String]) -> Bool {
        headings.contains { heading in
            guard citation.hasPrefix(heading) else { return false }
            let after = citation.dropFirst(heading.count).first
            return after.map { !($0.isLetter || $0.isNumber || $0 == "_") } ?? true
        }
    }
}
