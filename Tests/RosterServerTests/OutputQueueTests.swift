import Glibc
import Testing
@testable import RosterRuntime
@testable import RosterServer

@Suite("Output queue for slow peers")
struct OutputQueueTests {
    private func drain(_ queue: inout OutputQueue) throws -> String {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        while !queue.isEmpty { _ = try queue.write(to: fds[0]) }
        shutdown(fds[0], Int32(SHUT_WR))
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fds[1], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func answersStayInOrderAndLatestStateWins() throws {
        var queue = OutputQueue()
        queue.append(Array("answer1\n".utf8))
        queue.append(Array("user:validating\n".utf8), coalescing: "field:register:username")
        queue.append(Array("answer2\n".utf8))
        queue.append(Array("pass:empty\n".utf8), coalescing: "field:register:password")
        queue.append(Array("user:valid\n".utf8), coalescing: "field:register:username")
        #expect(queue.byteCount == "answer1\nanswer2\npass:empty\nuser:valid\n".utf8.count)
        #expect(try drain(&queue) == "answer1\nanswer2\npass:empty\nuser:valid\n")
        #expect(queue.byteCount == 0)
    }

    @Test func aPartlyWrittenEventIsNeverReplaced() throws {
        var queue = OutputQueue()
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var small: Int32 = 4096
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20) + [0x0A]
        queue.append(big, coalescing: "results:contacts")
        _ = try queue.write(to: fds[0])
        #expect(queue.byteCount > 0 && queue.byteCount < big.count)
        queue.append(Array("newer\n".utf8), coalescing: "results:contacts")
        #expect(queue.byteCount > "newer\n".utf8.count)
    }

    @Test func plainLinesKeepTheirPlaceAmongOthers() throws {
        var queue = OutputQueue()
        queue.appendPlain { $0 += Array("a1\n".utf8) }
        queue.appendPlain { $0 += Array("a2\n".utf8) }
        queue.append(Array("field:validating\n".utf8), coalescing: "field")
        queue.appendPlain { $0 += Array("a3\n".utf8) }
        queue.append(Array("field:valid\n".utf8), coalescing: "field")
        #expect(queue.byteCount == "a1\na2\na3\nfield:valid\n".utf8.count)
        #expect(try drain(&queue) == "a1\na2\na3\nfield:valid\n")
        #expect(queue.byteCount == 0)
    }

    @Test func manyPlainLinesDrainWhole() throws {
        var queue = OutputQueue()
        var expected = ""
        for index in 0..<5_000 {
            let line = "answer \(index)\n"
            expected += line
            queue.appendPlain { $0 += Array(line.utf8) }
        }
        #expect(queue.byteCount == expected.utf8.count)
        #expect(try drain(&queue) == expected)
    }
}

@Suite("Output queue memory")
struct OutputQueueMemoryTests {
    /// A peer that pipelines small requests gets its answers packed together, not one array each (issue 12: ten
    /// such peers held 1.38 GB, far more than their byte counts said).
    @Test func smallAnswersShareFramesAndEventsKeepTheirOwn() throws {
        var queue = OutputQueue()
        for index in 0..<1_000 { queue.append(Array("{\"id\":\(index),\"result\":{}}\n".utf8)) }
        #expect(queue.waitingFrameCount == 1)
        queue.append(Array("event\n".utf8), coalescing: "results:contacts")
        queue.append(Array("after\n".utf8))
        #expect(queue.waitingFrameCount == 3)
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: OutputQueue.mergeLimit + 1)
        queue.append(big)
        #expect(queue.waitingFrameCount == 4)
    }

    /// A frame the peer has read is freed at once, not when the whole queue next empties.
    @Test func writtenFramesAreFreedAtOnce() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        var queue = OutputQueue()
        let answer = [UInt8](repeating: UInt8(ascii: "a"), count: 100_000) + [0x0A]
        for _ in 0..<40 { queue.append(answer) }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        // Half the answers go through; the queue still holds the other half, and only those.
        var read = 0
        while read < 20 * answer.count {
            _ = try queue.write(to: fds[0])
            let count = chunk.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, min($0.count, 20 * answer.count - read), 0) }
            if count > 0 { read += count }
        }
        _ = try queue.write(to: fds[0])
        #expect(queue.byteCount > 0)
        #expect(queue.retainedByteCount <= queue.byteCount + answer.count)
    }
}
