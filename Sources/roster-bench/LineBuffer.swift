import CRosterFloor
import Glibc

/// Bytes read from one connection, handed out a whole line at a time (a line may arrive in pieces).
struct LineBuffer {
    private var bytes: [UInt8]
    private var filled = 0

    init(capacity: Int = 16_384) {
        bytes = [UInt8](repeating: 0, count: capacity)
    }

    enum ReadOutcome { case data, wouldBlock, closed }

    /// One `read`; grows the buffer when a line is longer than it.
    mutating func read(from fd: Int32) -> ReadOutcome {
        if filled == bytes.count { bytes.append(contentsOf: [UInt8](repeating: 0, count: bytes.count)) }
        let start = filled
        let count = bytes.withUnsafeMutableBytes { raw in
            Glibc.read(fd, raw.baseAddress.map { $0 + start }, raw.count - start)
        }
        if count > 0 {
            filled += count
            return .data
        }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return .wouldBlock }
        return .closed
    }

    /// Calls `body` with each complete line (without its newline) and drops them; returns how many.
    @discardableResult
    mutating func drainLines(limit: Int = .max, _ body: (UnsafeRawBufferPointer) -> Void) -> Int {
        var lines = 0
        var consumed = 0
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            while lines < limit, consumed < filled,
                  let newline = memchr(base + consumed, 0x0A, filled - consumed) {
                let end = base.distance(to: UnsafeRawPointer(newline))
                body(UnsafeRawBufferPointer(rebasing: raw[consumed..<end]))
                consumed = end + 1
                lines += 1
            }
        }
        if consumed > 0 {
            let rest = filled - consumed
            if rest > 0 {
                bytes.withUnsafeMutableBytes { raw in
                    guard let base = raw.baseAddress else { return }
                    memmove(base, base + consumed, rest)
                }
            }
            filled = rest
        }
        return lines
    }
}

extension UnsafeRawBufferPointer {
    /// Whether `needle` occurs in these bytes (lines are short; `memmem` does the work).
    func contains(_ needle: StaticString) -> Bool {
        guard let base = baseAddress, count > 0 else { return false }
        return roster_find(base, count, needle.utf8Start, needle.utf8CodeUnitCount) != nil
    }

    /// The unsigned integer right after `key` (e.g. `"rev":`), or nil.
    func integer(after key: StaticString) -> Int? {
        guard let base = baseAddress, count > 0,
              let hit = roster_find(base, count, key.utf8Start, key.utf8CodeUnitCount) else { return nil }
        var index = base.distance(to: UnsafeRawPointer(hit)) + key.utf8CodeUnitCount
        var value = 0
        var digits = 0
        while index < count, self[index] >= 0x30, self[index] <= 0x39 {
            value = value * 10 + Int(self[index] - 0x30)
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }
}
