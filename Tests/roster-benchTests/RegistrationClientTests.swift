import Foundation
import Glibc
import RosterRuntime
import Testing
@testable import roster_bench

/// The registration storm and the cross-daemon watch against stand-in daemons on socket pairs: what they count,
/// never how fast anything is.
@Suite("roster-bench registrations")
struct RegistrationClientTests {
    @Test func theStormCountsAnswersAndRefusalsAndNeverRepeatsAName() throws {
        let pairs = try (0..<3).map { _ in try socketPair() }
        let seen = Seen()
        let daemon = Thread { RegisteringStandIn(fds: pairs.map(\.server), seen: seen).serve() }
        daemon.start()
        let storm = RegistrationStorm(password: "bench-pass-1", warmupSeconds: 0, seconds: 0.05, name: { "name\($0)" })
        let result = try storm.run(connections: pairs.map(\.client))
        pairs.forEach { close($0.client) }
        seen.waitUntilDone()
        let names = seen.names
        #expect(result.registered > 0)
        // Every name ending in 7 is refused by the stand-in.
        #expect(result.refused > 0)
        #expect(result.firstRefusal?.contains("\"busy\"") == true)
        #expect(result.registered + result.refused <= names.count)
        #expect(Set(names).count == names.count)
        #expect(result.perSecond == Double(result.registered) / 0.05)
        #expect(result.latencies.count <= result.registered)
    }

    @Test func takenAfterTheAnswerIsOneSampleForEachName() throws {
        let result = try watch(.beforeTheAnswer)
        #expect(result.missed == 0)
        #expect(result.afterAnswer.count == 4)
        #expect(result.registration.count == 4)
    }

    @Test func aTakenThatNeverComesIsMissedNotWaitedForEver() throws {
        let result = try watch(.never)
        #expect(result.missed == 4)
        #expect(result.afterAnswer.count == 0)
        #expect(result.registration.count == 4)
    }

    /// A `taken` for an older input of the field is not the verdict on this name.
    @Test func aTakenForAnOlderRevisionDoesNotCount() throws {
        let result = try watch(.forThePreviousRevision)
        #expect(result.missed == 4)
        #expect(result.afterAnswer.count == 0)
    }

    @Test func aSignedIntervalCanBeNegative() {
        #expect(TakenWatch.signedMicroseconds(from: 5_000, to: 2_000) == -3)
        #expect(TakenWatch.signedMicroseconds(from: 2_000, to: 5_000) == 3)
    }

    private func watch(_ taken: WatchedStandIn.Taken) throws -> TakenWatch.Result {
        let a = try socketPair()
        let b = try socketPair()
        let standIn = Thread { WatchedStandIn(a: a.server, b: b.server, taken: taken).serve() }
        standIn.start()
        defer {
            close(a.client)
            close(b.client)
        }
        var watch = TakenWatch(names: (1...4).map { "fresh\($0)name" }, password: "bench-pass-1")
        watch.patience = 0.05
        return try watch.run(a: a.client, b: b.client)
    }
}

private func socketPair() throws -> (client: Int32, server: Int32) {
    var fds: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw BenchError("socketpair") }
    return (fds[0], fds[1])
}

/// The usernames a stand-in was asked to register, and whether it has stopped.
private final class Seen: Sendable {
    private let state = Locked<(names: [String], done: Bool)>(([], false))

    func add(_ name: String) { state.withLock { $0.names.append(name) } }
    func finish() { state.withLock { $0.done = true } }
    var names: [String] { state.withLock { $0.names } }

    func waitUntilDone() {
        while !state.withLock({ $0.done }) { usleep(1_000) }
    }
}

/// Reads lines of `line`'s shape from `fd` into `buffer` and hands each to `body`; false once `fd` closed.
private func readLines(_ fd: Int32, _ buffer: inout [UInt8], _ body: (String) -> Void) -> Bool {
    var chunk = [UInt8](repeating: 0, count: 4_096)
    let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return false }
    buffer += chunk[..<count]
    while let newline = buffer.firstIndex(of: 0x0A) {
        body(String(decoding: buffer[..<newline], as: UTF8.self))
        buffer.removeFirst(newline + 1)
    }
    return true
}

private func send(_ fd: Int32, _ text: String) {
    try? UnixSocket.writeAll(fd, Array((text + "\n").utf8))
}

/// The text between `"key":"` and the next quote.
private func stringValue(_ key: String, in line: String) -> String? {
    guard let start = line.range(of: "\"\(key)\":\"") else { return nil }
    return line[start.upperBound...].split(separator: "\"", maxSplits: 1).first.map(String.init)
}

private func idValue(in line: String) -> Int {
    guard let start = line.range(of: "\"id\":") else { return 0 }
    return Int(line[start.upperBound...].prefix { $0.isNumber }) ?? 0
}

/// Answers every `users.register` at once, refusing names that end in 7 with `busy`; stops when every
/// connection closed.
private struct RegisteringStandIn: Sendable {
    let fds: [Int32]
    let seen: Seen

    func serve() {
        defer {
            fds.forEach { close($0) }
            seen.finish()
        }
        var buffers = fds.map { _ in [UInt8]() }
        var open = Set(fds.indices)
        while !open.isEmpty {
            var watched = open.sorted().map { pollfd(fd: fds[$0], events: Int16(POLLIN), revents: 0) }
            guard poll(&watched, nfds_t(watched.count), 10_000) > 0 else { return }
            for (slot, index) in open.sorted().enumerated() where watched[slot].revents != 0 {
                let fd = fds[index]
                let alive = readLines(fd, &buffers[index]) { line in
                    let name = stringValue("username", in: line) ?? ""
                    seen.add(name)
                    let id = idValue(in: line)
                    if name.hasSuffix("7") {
                        send(fd, #"{"jsonrpc":"2.0","id":\#(id),"error":{"code":1,"message":"m","data":{"reason":"busy","retry_after_ms":5}}}"#)
                    } else {
                        send(fd, #"{"jsonrpc":"2.0","id":\#(id),"result":{"username":"\#(name)"}}"#)
                    }
                }
                if !alive { open.remove(index) }
            }
        }
    }
}

/// Two daemons in one: B's register form says every name is available, and A's registration of it sends B's
/// form `taken` (before A's answer, as a NOTIFY may), never, or for the wrong revision.
private struct WatchedStandIn: Sendable {
    enum Taken: Sendable { case beforeTheAnswer, never, forThePreviousRevision }
    let a: Int32
    let b: Int32
    let taken: Taken

    func serve() {
        defer {
            close(a)
            close(b)
        }
        var aBuffer: [UInt8] = []
        var bBuffer: [UInt8] = []
        var rev = 0
        while true {
            var watched = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
            guard poll(&watched, 2, 10_000) > 0 else { return }
            if watched[1].revents != 0 {
                let alive = readLines(b, &bBuffer) { line in
                    let id = idValue(in: line)
                    if line.contains("form.input") {
                        rev += 1
                        send(b, #"{"jsonrpc":"2.0","id":\#(id),"result":{"rev":\#(rev)}}"#)
                        send(b, field(state: "validating", code: "validating", rev: rev))
                        send(b, field(state: "valid", code: "available", rev: rev))
                    } else {
                        send(b, #"{"jsonrpc":"2.0","id":\#(id),"result":{}}"#)
                    }
                }
                if !alive { return }
            }
            if watched[0].revents != 0 {
                let alive = readLines(a, &aBuffer) { line in
                    switch taken {
                    case .beforeTheAnswer: send(b, field(state: "invalid", code: "taken", rev: rev))
                    case .forThePreviousRevision: send(b, field(state: "invalid", code: "taken", rev: rev - 1))
                    case .never: break
                    }
                    send(a, #"{"jsonrpc":"2.0","id":\#(idValue(in: line)),"result":{"username":"x"}}"#)
                }
                if !alive { return }
            }
        }
    }

    private func field(state: String, code: String, rev: Int) -> String {
        #"{"jsonrpc":"2.0","method":"event","params":{"type":"field","form":"register","field":"username","state":"\#(state)","code":"\#(code)","message":"m","enabled":true,"rev":\#(rev)}}"#
    }
}
