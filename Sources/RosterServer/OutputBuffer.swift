/// Bytes waiting for a slow peer, consumed from the front without shifting on every write.
struct OutputBuffer {
    private var storage: [UInt8] = []
    private var start = 0

    var count: Int { storage.count - start }
    var isEmpty: Bool { start == storage.count }

    mutating func append(_ bytes: [UInt8]) {
        if isEmpty {
            storage = bytes
            start = 0
        } else {
            storage.append(contentsOf: bytes)
        }
    }

    mutating func withUnsentBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        let offset = start
        return storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
    }

    mutating func consume(_ count: Int) {
        start += count
        if start == storage.count {
            storage = []
            start = 0
        } else if start > 65_536 && start > storage.count / 2 {
            storage.removeFirst(start)
            start = 0
        }
    }
}
