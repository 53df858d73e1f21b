import Glibc
import RosterFuzzTargets
import RosterTestSupport
import Testing

/// Every file of every parser target's corpus (`Fuzz/corpus/<target>/`), the crashes once found among them, runs
/// through its parser in the plain test build too: a parser that traps again fails `swift test` without a fuzzer
/// build, and one that breaks a property it promises names the file.
@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    @Test(arguments: ParserTarget.allCases)
    func everyCorpusFileHoldsToItsParsersRules(target: ParserTarget) throws {
        let directory = SourceTree().root + "/Fuzz/corpus/" + target.rawValue
        let files = Self.files(in: directory)
        #expect(files.count >= 5, "\(directory) holds \(files.count) inputs; the seeds are missing")
        for file in files {
            let bytes = try #require(Self.contents(of: directory + "/" + file), "\(file) cannot be read")
            let broken = target.run(bytes)
            #expect(broken.isEmpty, "\(target.rawValue)/\(file): \(broken)")
        }
    }

    /// The lines that once crashed the daemon are in the corpus, so they are replayed on every run.
    @Test func theKnownCrashersAreInTheVCardCorpus() throws {
        let directory = SourceTree().root + "/Fuzz/corpus/vcard"
        let texts = Self.files(in: directory).compactMap { Self.contents(of: directory + "/" + $0) }
            .map { String(decoding: $0, as: UTF8.self) }
        for line in ["X;:y", "NOTE;;TYPE=a:y", "NOTE;=:y"] {
            #expect(texts.contains { $0.contains(line) }, "no corpus file holds \(line)")
        }
    }

    private static func files(in directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix("."), entry.pointee.d_type == UInt8(DT_REG) { names.append(name) }
        }
        return names.sorted()
    }

    private static func contents(of path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while case let count = fread(&chunk, 1, chunk.count, file), count > 0 {
            bytes += chunk[..<count]
        }
        return bytes
    }
}
