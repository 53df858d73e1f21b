import Foundation
import RosterProtocol
import Testing

/// protocol.md's "A session, en" transcript is what the real daemon says, line for line: it once
/// showed a `session` event after `users.register`, which the daemon never sent.
@Suite("protocol.md transcripts against the real rosterd", .serialized)
struct ProtocolTranscriptTests {
    private static let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(3)
        .joined(separator: "/")

    /// The transcript under `heading`: each request with the lines that follow it.
    private static func transcript(under heading: String) throws -> [(request: String, expected: [String])] {
        let text = try readFile(root + "/protocol.md")
        guard let start = text.range(of: heading + "\n\n```\n"),
              let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else {
            throw HarnessError(description: "no transcript under \(heading)")
        }
        var steps: [(request: String, expected: [String])] = []
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            if line.hasPrefix("> ") { steps.append((String(line.dropFirst(2)), [])) } else { steps[steps.count - 1].expected.append(String(line)) }
        }
        return steps
    }

    /// Times, tokens and contacts' random uids differ from run to run; `…` stands for text the document leaves out.
    private static func matches(_ actual: String, _ expected: String) -> Bool {
        func masked(_ text: String) -> String {
            text.replacing(/"(created_at|updated_at)":\d+/) { "\"\($0.output.1)\":0" }
                .replacing(/"token":"[A-Za-z0-9_-]{43}"/) { _ in "\"token\":\"T\"" }
                .replacing(/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) { _ in "UUID" }
        }
        let pieces = masked(expected).components(separatedBy: "…")
        var rest = Substring(masked(actual))
        for (index, piece) in pieces.enumerated() {
            if index == 0 {
                guard rest.hasPrefix(piece) else { return false }
                rest = rest.dropFirst(piece.count)
            } else if index == pieces.count - 1 {
                return rest.hasSuffix(piece)
            } else {
                guard let found = rest.range(of: piece) else { return false }
                rest = rest[found.upperBound...]
            }
        }
        return rest.isEmpty
    }

    @Test func aSessionInEnglish() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        for step in try Self.transcript(under: "### A session, en") {
            try client.send(step.request + "\n")
            for expected in step.expected {
                let actual = try client.readRawLine() ?? ""
                #expect(Self.matches(actual, expected), "after \(step.request):\n  got  \(actual)\n  want \(expected)")
            }
        }
        client.shutdownWrite()
        #expect(try client.readRawLine() == nil, "the daemon said more than the transcript")
    }
}
