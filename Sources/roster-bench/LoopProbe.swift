import CRosterFloor
import Glibc

/// An unrelated connection that pings the daemon one request at a time while another connection's requests are
/// being answered: every round trip it measures is time the loop kept it waiting (the loop stall).
struct LoopProbe {
    private let fd: Int32
    private let ping: [UInt8]
    private var buffer = LineBuffer()
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    /// `fd` is a blocking connection of its own; `ping` a request the loop answers by itself (`session.whoami`).
    init(fd: Int32, ping: [UInt8]) {
        self.fd = fd
        self.ping = ping
    }

    /// One round trip, in µs.
    mutating func roundTrip() throws(BenchError) -> Double {
        let started = Clock.now()
        try UnixSocket.writeAll(fd, ping)
        _ = try UnixSocket.readLine(fd, &buffer)
        return Clock.microseconds(since: started)
    }

    /// Pings for `seconds` with nothing else going on: the reference for the phases.
    mutating func idle(seconds: Double) throws(BenchError) -> ProbedPhase {
        var samples = Samples()
        let started = Clock.now()
        let until = started + UInt64(seconds * 1e9)
        while Clock.now() < until { samples.add(try roundTrip()) }
        return ProbedPhase(samples: samples, seconds: Double(Clock.now() - started) / 1e9, answers: [])
    }

    /// Sends `requests` on `other` one after another, each once the previous one is answered, and pings back to
    /// back meanwhile (at least once per request). `other` must be non-blocking: it is only read between pings.
    mutating func during(_ requests: [[UInt8]], on other: Int32, timeoutSeconds: Double = 120) throws(BenchError)
        -> ProbedPhase {
        var samples = Samples()
        var answers: [[UInt8]] = []
        let started = Clock.now()
        let deadline = started + UInt64(timeoutSeconds * 1e9)
        var incoming = AnswerReader()
        for request in requests {
            var sent = 0
            while true {
                sent += try Self.sendSome(other, request, from: sent)
                samples.add(try roundTrip())
                if sent == request.count, let answer = try receive(other, into: &incoming) {
                    answers.append(answer)
                    break
                }
                if Clock.now() > deadline { throw BenchError("no answer within \(Int(timeoutSeconds)) s during the loop-stall probe") }
            }
        }
        return ProbedPhase(samples: samples, seconds: Double(Clock.now() - started) / 1e9, answers: answers)
    }

    /// As much of `bytes[offset...]` as the socket takes now; how much that was.
    private static func sendSome(_ fd: Int32, _ bytes: [UInt8], from offset: Int) throws(BenchError) -> Int {
        guard offset < bytes.count else { return 0 }
        let written = bytes.withUnsafeBytes { raw in write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
        if written >= 0 { return written }
        if errno == EAGAIN || errno == EINTR { return 0 }
        throw BenchError("write: \(String(cString: strerror(errno)))")
    }

    /// Reads what has arrived, without waiting; the answer once its whole line is in.
    private mutating func receive(_ fd: Int32, into reader: inout AnswerReader) throws(BenchError) -> [UInt8]? {
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                if let answer = reader.take(chunk[..<count]) { return answer }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
            throw BenchError("the server closed the connection during the loop-stall probe")
        }
    }
}

/// What the probe saw during one phase, and the answers of the phase's requests, in order.
struct ProbedPhase {
    var samples: Samples
    let seconds: Double
    let answers: [[UInt8]]
}

/// The answer line to one request, put together from pieces as they arrive; event lines before it are dropped,
/// lines after it stay for the next answer.
struct AnswerReader {
    private var bytes: [UInt8] = []
    /// Where to look for the next newline: everything before it holds none.
    private var scanned = 0

    /// Adds `piece`; the answer line (without its newline) once it is complete.
    mutating func take(_ piece: ArraySlice<UInt8>) -> [UInt8]? {
        bytes.append(contentsOf: piece)
        while let newline = bytes[scanned...].firstIndex(of: 0x0A) {
            let line = bytes[..<newline]
            let answer = Self.offset(of: #""method":"event""#, in: line) == nil ? Array(line) : nil
            bytes.removeFirst(newline + 1)
            scanned = 0
            if let answer { return answer }
        }
        scanned = bytes.count
        return nil
    }

    /// Whether `line` is a result rather than an error: whichever member comes first (the daemon writes `id`, then
    /// one of them; an error's `data` may hold a `"result":` of its own).
    static func isResult(_ line: [UInt8]) -> Bool {
        guard let result = offset(of: #""result":"#, in: line[...]) else { return false }
        return offset(of: #""error":"#, in: line[...]).map { result < $0 } ?? true
    }

    /// The daemon writes the members that tell a line's kind (`"method":"event"`, `"id"`) first, so only the head
    /// is searched: a contact's text further on that happens to say the same tells nothing.
    private static func offset(of marker: StaticString, in line: ArraySlice<UInt8>) -> Int? {
        line.prefix(64).withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0,
                  let hit = roster_find(base, raw.count, marker.utf8Start, marker.utf8CodeUnitCount) else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
    }
}
