import Foundation
import Glibc
import RosterCore
import Testing
@testable import roster_bench

@Suite("loop-stall probe")
struct LoopProbeTests {
    @Test func anAnswerSplitIntoPiecesComesOutWholeAfterTheEventsBeforeIt() {
        var reader = AnswerReader()
        let text = #"{"jsonrpc":"2.0","method":"event","params":{"type":"session"}}"# + "\n"
            + #"{"jsonrpc":"2.0","id":1,"result":{"token":"t"}}"# + "\n" + #"{"jsonrpc":"2.0","id":2,"#
        let bytes = Array(text.utf8)
        var answers: [String] = []
        for start in stride(from: 0, to: bytes.count, by: 7) {
            if let answer = reader.take(bytes[start..<min(start + 7, bytes.count)]) {
                answers.append(String(decoding: answer, as: UTF8.self))
            }
        }
        #expect(answers == [#"{"jsonrpc":"2.0","id":1,"result":{"token":"t"}}"#])
        // The start of the next answer was kept for it.
        let rest = reader.take(Array(#""result":{}}"#.utf8 + [0x0A])[...])
        #expect(rest.map { String(decoding: $0, as: UTF8.self) } == #"{"jsonrpc":"2.0","id":2,"result":{}}"#)
    }

    @Test func onlyTheHeadOfALineTellsItsKind() {
        var reader = AnswerReader()
        let deep = #"{"jsonrpc":"2.0","id":4,"result":{"data":""# + String(repeating: "x", count: 80)
            + #" \"method\":\"event\""}}"# + "\n"
        #expect(reader.take(Array(deep.utf8)[...]) != nil)
        #expect(AnswerReader.isResult(Array(#"{"jsonrpc":"2.0","id":4,"result":{}}"#.utf8)))
        #expect(!AnswerReader.isResult(Array(#"{"jsonrpc":"2.0","id":4,"error":{"code":1,"data":{"result":1}}}"#.utf8)))
    }

    @Test func percentilesAreNearestRankWhateverTheOrder() {
        var samples = Samples()
        #expect(samples.percentile(99) == 0)
        for value in (1...200).reversed() { samples.add(Double(value)) }
        #expect(samples.percentile(50) == 100)
        #expect(samples.percentile(99) == 198)
        #expect(samples.percentile(100) == 200)
        #expect(samples.percentile(0) == 1)
    }

    @Test func theImportNeverPassesItsSizeAndEveryRowIsAContact() {
        let csv = Suite.importCSV(bytes: 4_096)
        #expect(csv.text.utf8.count <= 4_096)
        #expect(csv.text.utf8.count > 4_096 - 64)
        let parsed = ContactCSV.parse(csv.text)
        #expect(parsed.errors.isEmpty)
        #expect(parsed.contacts.count == csv.rows)
        #expect(Set(parsed.contacts.map(\.draft.name)).count == csv.rows)
    }

    @Test func jsonStringsReadBackAsTheText() throws {
        let text = "a\"b\\c\r\nd\te\u{1}f\u{1F}张三"
        let line = Requests.importCSV(text)
        let object = try JSONSerialization.jsonObject(with: Data(line.dropLast())) as? [String: Any]
        let params = object?["params"] as? [String: Any]
        #expect(params?["data"] as? String == text)
    }

    /// A stand-in daemon answers every ping at once and each request on the other connection only after three
    /// more pings, with an event before it: the probe must go on pinging while a request is out, send a request
    /// larger than the socket takes at once, and hand back the answers in order.
    @Test func theProbePingsWhileARequestIsOutAndCollectsEveryAnswer() throws {
        let probePair = try Self.socketPair()
        let otherPair = try Self.socketPair()
        _ = fcntl(otherPair.client, F_SETFL, fcntl(otherPair.client, F_GETFL) | O_NONBLOCK)
        let responder = Thread { StandInDaemon(probe: probePair.server, other: otherPair.server).serve() }
        responder.start()
        defer {
            close(probePair.client)
            close(otherPair.client)
        }
        var probe = LoopProbe(fd: probePair.client, ping: Requests.whoami)
        let big = Requests.importCSV(String(repeating: "y", count: 600_000), id: 7)
        var phase = try probe.during([Requests.search("a", id: 6), big], on: otherPair.client)
        #expect(phase.answers.map { String(decoding: $0, as: UTF8.self) }
                == [#"{"jsonrpc":"2.0","id":1,"result":{"bytes":\#(Requests.search("a", id: 6).count)}}"#,
                    #"{"jsonrpc":"2.0","id":2,"result":{"bytes":\#(big.count)}}"#])
        #expect(phase.samples.count >= 6)
        #expect(phase.samples.percentile(100) > 0)
    }

    private static func socketPair() throws -> (client: Int32, server: Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw BenchError("socketpair") }
        return (fds[0], fds[1])
    }
}

/// The other end of both of the probe test's connections, on a thread of its own; it stops when they close.
private struct StandInDaemon: Sendable {
    let probe: Int32
    let other: Int32

    func serve() {
        defer {
            close(probe)
            close(other)
        }
        var probeBuffer: [UInt8] = []
        var otherBuffer: [UInt8] = []
        var waiting: [Int] = []
        var pingsSinceRequest = 0
        var answered = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            var watched = [pollfd(fd: probe, events: Int16(POLLIN), revents: 0), pollfd(fd: other, events: Int16(POLLIN), revents: 0)]
            guard poll(&watched, 2, 10_000) > 0 else { return }
            for (index, fd) in [probe, other].enumerated() where watched[index].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { return }
                if fd == probe { probeBuffer += chunk[..<count] } else { otherBuffer += chunk[..<count] }
            }
            while let newline = probeBuffer.firstIndex(of: 0x0A) {
                probeBuffer.removeFirst(newline + 1)
                send(probe, #"{"jsonrpc":"2.0","id":1,"result":{"user":null}}"# + "\n")
                pingsSinceRequest += 1
            }
            while let newline = otherBuffer.firstIndex(of: 0x0A) {
                waiting.append(newline + 1)
                otherBuffer.removeFirst(newline + 1)
                pingsSinceRequest = 0
            }
            if let size = waiting.first, pingsSinceRequest >= 3 {
                waiting.removeFirst()
                answered += 1
                send(other, #"{"jsonrpc":"2.0","method":"event","params":{"type":"contacts"}}"# + "\n"
                     + #"{"jsonrpc":"2.0","id":\#(answered),"result":{"bytes":\#(size)}}"# + "\n")
            }
        }
    }

    private func send(_ fd: Int32, _ text: String) {
        try? UnixSocket.writeAll(fd, Array(text.utf8))
    }
}
