import Glibc

/// Splits a byte stream into newline-terminated lines, never holding more than `maxLineBytes` of one line.
///
/// A line longer than the limit is reported once, as soon as the limit is passed (not when its newline
/// finally arrives), and the rest of it is discarded up to the next newline. `\r\n` counts as `\n`, and
/// lines holding only whitespace are dropped (protocol.md §Framing).
public struct LineFramer: Sendable {
    /// What the framer found in the bytes it was fed.
    public enum Output: Equatable, Sendable {
        case line([UInt8])
        /// A whole line lying in the chunk just fed, at these offsets, terminator and blank lines left out; only
        /// `feedBorrowing` gives these, and they are valid until the chunk's memory is reused.
        case span(Range<Int>)
        case tooLarge
    }

    /// May change between feeds (a session that logs in takes longer lines); a line held already keeps what it
    /// holds, and is measured against the new limit from the next byte.
    public var maxLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false

    public init(maxLineBytes: Int = 65_536) {
        self.maxLineBytes = maxLineBytes
    }

    /// Drops the unfinished line held, and the rest of it up to the next newline (a budget refused it).
    public mutating func dropPartialLine() {
        guard !pending.isEmpty else { return }
        pending.removeAll(keepingCapacity: false)
        discarding = true
    }

    /// Bytes of an unfinished line held right now; bounded by `maxLineBytes + 1`.
    public var bufferedByteCount: Int { pending.count }

    /// Whether an unfinished line is held (used to time out peers that stall mid-line).
    public var hasPartialLine: Bool { !pending.isEmpty || discarding }

    public mutating func feed(_ chunk: UnsafeRawBufferPointer, into outputs: inout [Output]) {
        feed(chunk, borrowing: false, into: &outputs)
    }

    /// As `feed`, but a line that starts and ends within `chunk` comes as a `.span` of it instead of a copy
    /// (a copy per line was a tenth of a pipelined request's cost). Use the spans before the chunk's
    /// memory is reused; lines carried over from earlier chunks still come as `.line`.
    public mutating func feedBorrowing(_ chunk: UnsafeRawBufferPointer, into outputs: inout [Output]) {
        feed(chunk, borrowing: true, into: &outputs)
    }

    private mutating func feed(_ chunk: UnsafeRawBufferPointer, borrowing: Bool, into outputs: inout [Output]) {
        let bytes = chunk.bindMemory(to: UInt8.self)
        guard let base = bytes.baseAddress else { return }
        var start = 0
        while start < bytes.count {
            // memchr: this scan sees every byte a peer sends, including megabytes being discarded.
            let newline = memchr(base + start, 0x0A, bytes.count - start).map {
                UnsafeRawPointer($0) - UnsafeRawPointer(base)
            }
            let end = newline ?? bytes.count
            if borrowing, newline != nil, !discarding, pending.isEmpty {
                span(start..<end, of: bytes, into: &outputs)
            } else if discarding {
                if newline != nil { discarding = false }
            } else {
                let room = maxLineBytes + 1 - pending.count
                let take = min(room, end - start)
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<(start + take)]))
                let tookAll = take == end - start
                if pending.count > maxLineBytes && !endsInCarriageReturnAtLimit(tookAll: tookAll) {
                    pending.removeAll(keepingCapacity: false)
                    outputs.append(.tooLarge)
                    discarding = newline == nil
                } else if newline != nil {
                    emit(into: &outputs)
                }
            }
            start = end + 1
        }
    }

    public mutating func feed(_ bytes: [UInt8]) -> [Output] {
        var outputs: [Output] = []
        bytes.withUnsafeBytes { feed($0, into: &outputs) }
        return outputs
    }

    /// The unterminated tail at end of input, treated as a last line so `printf '{…}' | socat` still works.
    public mutating func finish(into outputs: inout [Output]) {
        if !discarding && !pending.isEmpty { emit(into: &outputs) }
        pending.removeAll()
        discarding = false
    }

    /// A `\r` right at the limit may be the first half of a `\r\n` terminator, which is not in the line's budget.
    private func endsInCarriageReturnAtLimit(tookAll: Bool) -> Bool {
        tookAll && pending.count == maxLineBytes + 1 && pending.last == 0x0D
    }

    /// The rules of `feed` and `emit` for a whole line in the chunk, the `\n` excluded.
    private func span(_ range: Range<Int>, of bytes: UnsafeBufferPointer<UInt8>, into outputs: inout [Output]) {
        let endsInReturn = !range.isEmpty && bytes[range.upperBound - 1] == 0x0D
        if range.count > maxLineBytes && !(range.count == maxLineBytes + 1 && endsInReturn) {
            outputs.append(.tooLarge)
            return
        }
        let line = range.lowerBound..<(range.upperBound - (endsInReturn ? 1 : 0))
        if line.allSatisfy({ bytes[$0] == 0x20 || bytes[$0] == 0x09 || bytes[$0] == 0x0D }) { return }
        outputs.append(.span(line))
    }

    private mutating func emit(into outputs: inout [Output]) {
        var line = pending
        pending.removeAll(keepingCapacity: true)
        if line.last == 0x0D { line.removeLast() }
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        outputs.append(.line(line))
    }
}
