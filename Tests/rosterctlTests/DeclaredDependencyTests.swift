import RosterTestSupport
import Testing

/// rosterctl declares every module of ours it imports, so the manifest says what the client really depends
/// on instead of leaning on what another dependency happens to pull in.
@Suite("rosterctl's dependencies")
struct DeclaredDependencyTests {
    @Test func everyImportedModuleOfOursIsDeclared() throws {
        let tree = SourceTree()
        let manifest = try #require(tree.text(of: "Package.swift"))
        let declared = try #require(Self.dependencies(of: "rosterctl", in: manifest))
        let targets = Self.targetNames(in: manifest)
        var imported: Set<String> = []
        for file in tree.swiftFiles(under: "Sources/rosterctl") {
            imported.formUnion(SourceTree.imports(in: file.text))
        }
        #expect(imported.contains("RosterCore"), "the check would be vacuous: rosterctl imports no RosterCore")
        #expect(imported.intersection(targets).subtracting(declared).isEmpty,
                "undeclared: \(imported.intersection(targets).subtracting(declared).sorted())")
    }

    /// Every target the manifest names, which is what "of ours" means (Glibc and Testing are not).
    private static func targetNames(in manifest: String) -> Set<String> {
        let afterNames = manifest.split(separator: "name: \"").dropFirst()
        return Set(afterNames.compactMap { $0.split(separator: "\"").first.map(String.init) })
    }

    /// The quoted names in a target's `dependencies: [...]`.
    private static func dependencies(of target: String, in manifest: String) -> Set<String>? {
        guard let start = manifest.range(of: "(name: \"\(target)\", dependencies: [") else { return nil }
        let rest = manifest[start.upperBound...]
        guard let end = rest.firstIndex(of: "]") else { return nil }
        let pieces = rest[..<end].split(separator: "\"", omittingEmptySubsequences: false)
        // Quoted names are the odd pieces between the quotes.
        return Set(pieces.enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
    }
}
