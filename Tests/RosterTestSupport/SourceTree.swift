import Glibc

/// The package's own source files as text, for tests that hold the code to a rule of the house (what a module
/// may call, what a target must declare). Found from the calling test's `#filePath`, so no working directory
/// is assumed.
public struct SourceTree {
    /// The package root: the directory above `Tests/`.
    public let root: String

    public init(testFile: String = #filePath) {
        let parts = testFile.split(separator: "/", omittingEmptySubsequences: false)
        let tests = parts.lastIndex(of: "Tests") ?? parts.endIndex
        root = tests == parts.endIndex ? "." : parts[..<tests].joined(separator: "/")
    }

    /// Every `.swift` file below `directory` (relative to the root), with its text, sorted by path.
    public func swiftFiles(under directory: String) -> [(path: String, text: String)] {
        var found: [(path: String, text: String)] = []
        collect(directory, into: &found)
        return found.sorted { $0.path < $1.path }
    }

    /// The text of a file relative to the root, or nil when it cannot be read.
    public func text(of path: String) -> String? {
        guard let file = fopen(root + "/" + path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while case let count = fread(&chunk, 1, chunk.count, file), count > 0 {
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The identifiers of some Swift code, comments left out (a comment may well say "open").
    public static func identifiers(in text: String) -> Set<String> {
        var names: Set<String> = []
        for line in text.split(separator: "\n") {
            let code = Self.withoutComment(line)
            for word in code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }) {
                names.insert(String(word))
            }
        }
        return names
    }

    /// The modules a file imports (`import X`, `@testable import X`).
    public static func imports(in text: String) -> Set<String> {
        var modules: Set<String> = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: "import"), index == 0 || words[0] == "@testable",
                  index + 1 < words.count else { continue }
            modules.insert(String(words[index + 1]))
        }
        return modules
    }

    /// A line up to its `//`, if any (one inside a string literal cuts it short too, which only hides names).
    private static func withoutComment(_ line: Substring) -> Substring {
        var previous: Character?
        for index in line.indices {
            if line[index] == "/" && previous == "/" { return line[..<line.index(before: index)] }
            previous = line[index]
        }
        return line
    }

    private func collect(_ directory: String, into found: inout [(path: String, text: String)]) {
        guard let handle = opendir(root + "/" + directory) else { return }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let path = directory + "/" + name
            if name.hasSuffix(".swift"), let text = text(of: path) {
                found.append((path, text))
            } else if !name.hasPrefix("."), entry.pointee.d_type == UInt8(DT_DIR) {
                collect(path, into: &found)
            }
        }
    }
}
