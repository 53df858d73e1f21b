import RosterRuntime
import Glibc

/// Lines waiting for a slow peer. Answers are kept in order; an event that only states the latest value of
/// something (a field's verdict, a form's submittable, the latest results) replaces an older one for the same
/// thing that is still waiting, because an older validation state is worthless once a newer one exists.
struct OutputQueue {
    /// What an event is the latest value of; events with the same key supersede each other.
    typealias CoalesceKey = String

    private struct Frame {
        var bytes: [UInt8]
        let key: CoalesceKey?
    }

    private var frames: [Frame] = []
    private var head = 0
    /// Bytes of `frames[head]` already written.
    private var written = 0
    private(set) var byteCount = 0
    /// Where the frames queued by the current batch begin (see `beginBatch`), or nil outside a batch.
    private var batchStart: Int?

    var isEmpty: Bool { head == frames.count }

    /// Frames waiting to be written (answers share frames; each coalescable event has its own).
    var waitingFrameCount: Int { frames.count - head }

    /// Bytes the queue keeps allocated for lines, written ones included: what it costs beyond `byteCount`.
    var retainedByteCount: Int { frames.reduce(0) { $0 + $1.bytes.count } }

    mutating func append(_ bytes: [UInt8], coalescing key: CoalesceKey? = nil) {
        if let key, let index = supersededIndex(for: key) {
            byteCount -= frames[index].bytes.count
            frames.remove(at: index)
            if let start = batchStart { batchStart = start - 1 }
        }
        byteCount += bytes.count
        // A small answer joins the newest plain frame: an array per 60-byte answer costs twice its size again in
        // headers, so a peer that pipelines small requests without reading held far more than `byteCount` said.
        if key == nil, bytes.count <= OutputQueue.mergeLimit, let last = openPlainFrame {
            frames[last].bytes.append(contentsOf: bytes)
            return
        }
        frames.append(Frame(bytes: bytes, key: key))
    }

    /// The newest frame, if it is waiting, supersedes nothing and has room for more plain lines.
    private var openPlainFrame: Int? {
        guard let last = frames.indices.last, last >= head, frames[last].key == nil,
              frames[last].bytes.count < OutputQueue.plainFrameLimit else { return nil }
        return last
    }

    /// Appends a line that supersedes nothing, written by `build` straight into the newest waiting frame when
    /// that one supersedes nothing either (an array per answer, allocated and freed, was an eighth of a
    /// pipelined request's instructions). A frame holds at most `plainFrameLimit` bytes before a new one starts.
    mutating func appendPlain(_ build: (inout [UInt8]) -> Void) {
        if let last = openPlainFrame {
            let before = frames[last].bytes.count
            build(&frames[last].bytes)
            byteCount += frames[last].bytes.count - before
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(OutputQueue.plainFrameCapacity)
        build(&bytes)
        byteCount += bytes.count
        frames.append(Frame(bytes: bytes, key: nil))
    }

    static let plainFrameLimit = 65_536
    static let plainFrameCapacity = 4_096
    /// Lines up to this size are copied into a plain frame rather than queued as frames of their own.
    static let mergeLimit = 4_096

    /// Lines queued from here to `endBatch` go out together in one `writev`. They are held back only to save
    /// syscalls, not because the peer is slow, so none of them supersedes another: coalescing still applies
    /// only to what the socket refused earlier.
    mutating func beginBatch() { batchStart = frames.count }

    mutating func endBatch() { batchStart = nil }

    /// A waiting (not partly written) frame with the same key, searched from the newest back.
    private func supersededIndex(for key: CoalesceKey) -> Int? {
        var index = (batchStart ?? frames.count) - 1
        let firstWhole = written > 0 ? head + 1 : head
        while index >= firstWhole {
            if frames[index].key == key { return index }
            index -= 1
        }
        return nil
    }

    /// Writes as much as the socket takes with one `writev`; throws when the peer is gone.
    mutating func write(to fd: Int32) throws(SystemError) -> IOResult<Int> {
        let batch = min(frames.count - head, 64)
        guard batch > 0 else { return .done(0) }
        var vectors: [iovec] = []
        vectors.reserveCapacity(batch)
        // The frames' storage stays alive and unmoved for the call: nothing mutates `frames` inside the closure.
        let result = withFramePointers(count: batch) { pointers in
            for (offset, pointer) in pointers.enumerated() {
                let skip = offset == 0 ? written : 0
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: pointer.baseAddress.map { $0 + skip }),
                                     iov_len: pointer.count - skip))
            }
            return Result { () throws(SystemError) -> IOResult<Int> in
                try Syscall.nonBlocking("writev") { writev(fd, vectors, Int32(vectors.count)) }
            }
        }
        let outcome = try result.get()
        if case .done(let count) = outcome { consume(count) }
        return outcome
    }

    private func withFramePointers<R>(count: Int, _ body: ([UnsafeBufferPointer<UInt8>]) -> R) -> R {
        var pointers: [UnsafeBufferPointer<UInt8>] = []
        pointers.reserveCapacity(count)
        func collect(_ index: Int) -> R {
            guard index < head + count else { return body(pointers) }
            return frames[index].bytes.withUnsafeBufferPointer { buffer in
                pointers.append(buffer)
                return collect(index + 1)
            }
        }
        return collect(head)
    }

    private mutating func consume(_ count: Int) {
        var left = count
        byteCount -= count
        while left > 0, head < frames.count {
            let remaining = frames[head].bytes.count - written
            if left >= remaining {
                left -= remaining
                // Freed now, not when the queue next empties: a peer reading slowly through big answers would
                // otherwise keep every one it already read alive until it caught up completely.
                frames[head].bytes = []
                head += 1
                written = 0
            } else {
                written += left
                left = 0
            }
        }
        if head == frames.count || head > 256 {
            // Indices shift below; a batch is never written while open, so this is only a safeguard.
            batchStart = nil
        }
        if head == frames.count {
            frames.removeAll(keepingCapacity: frames.count < 1_024)
            head = 0
        } else if head > 256 && head * 2 > frames.count {
            frames.removeFirst(head)
            head = 0
        }
    }
}
