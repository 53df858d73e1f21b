import Foundation

/// One kind of search key for every slot of a `ContactIndex`, back to back in one byte array, so a search
/// looks for a query in all contacts at once with `memchr` instead of visiting each contact.
struct KeyColumn: Sendable {
    private(set) var bytes: [UInt8] = []
    /// `starts[slot] ..< starts[slot + 1]` is the slot's key; there is always one more start than slots.
    private(set) var starts: [UInt32] = [0]

    mutating func append<C: Collection<UInt8>>(_ key: C) {
        bytes.append(contentsOf: key)
        starts.append(UInt32(bytes.count))
    }

    mutating func reserve(bytes byteCount: Int, slots: Int) {
        bytes.reserveCapacity(byteCount)
        starts.reserveCapacity(slots + 1)
    }

    func key(_ slot: Int) -> ArraySlice<UInt8> { bytes[Int(starts[slot])..<Int(starts[slot + 1])] }

    /// Calls `visit(slot, position, start, end)` for each occurrence of `needle` that lies wholly inside one
    /// slot's key (`position` and the key's bounds are offsets in `bytes`), in order; with `prefixOnly`,
    /// only occurrences at a key's start. `visit` returns true when the rest of that key can be skipped.
    func scan(_ needle: UnsafeBufferPointer<UInt8>, prefixOnly: Bool,
              _ visit: (_ slot: Int, _ position: Int, _ start: Int, _ end: Int) -> Bool) {
        guard let first = needle.first else { return }
        bytes.withUnsafeBufferPointer { haystack in
            starts.withUnsafeBufferPointer { starts in
                if prefixOnly {
                    scanPrefixes(needle, first, haystack, starts, visit)
                } else {
                    scanAll(needle, first, haystack, starts, visit)
                }
            }
        }
    }

    /// Keys are short, so visiting each slot's first byte is cheaper than finding every occurrence.
    private func scanPrefixes(_ needle: UnsafeBufferPointer<UInt8>, _ first: UInt8,
                              _ haystack: UnsafeBufferPointer<UInt8>, _ starts: UnsafeBufferPointer<UInt32>,
                              _ visit: (Int, Int, Int, Int) -> Bool) {
        var end = Int(starts[0])
        for slot in 0..<(starts.count - 1) {
            let start = end
            end = Int(starts[slot + 1])
            if end - start >= needle.count && haystack[start] == first
                && ByteSearch.matches(needle, in: haystack, at: start) {
                _ = visit(slot, start, start, end)
            }
        }
    }

    /// `memchr` finds candidates over the whole column; only a verified match pays for finding its slot.
    private func scanAll(_ needle: UnsafeBufferPointer<UInt8>, _ first: UInt8,
                         _ haystack: UnsafeBufferPointer<UInt8>, _ starts: UnsafeBufferPointer<UInt32>,
                         _ visit: (Int, Int, Int, Int) -> Bool) {
        guard let base = haystack.baseAddress else { return }
        let slotCount = starts.count - 1
        var slot = 0
        var from = 0
        let last = haystack.count - needle.count
        while from <= last {
            guard let hit = memchr(base + from, Int32(first), last - from + 1) else { return }
            let position = UnsafeRawPointer(hit).assumingMemoryBound(to: UInt8.self) - base
            from = position + 1
            guard ByteSearch.matches(needle, in: haystack, at: position) else { continue }
            slot = KeyColumn.slot(containing: position, from: slot, slotCount: slotCount, starts)
            let start = Int(starts[slot])
            let end = Int(starts[slot + 1])
            if position + needle.count <= end && visit(slot, position, start, end) { from = end }
        }
    }

    /// Gallops forward from the last slot found, then bisects: hits come in increasing order, sparse or dense.
    @inline(__always)
    private static func slot(containing position: Int, from known: Int, slotCount: Int,
                             _ starts: UnsafeBufferPointer<UInt32>) -> Int {
        var low = known
        var step = 1
        while low + step < slotCount && Int(starts[low + step]) <= position {
            low += step
            step *= 2
        }
        var high = min(low + step, slotCount)
        // starts[low] <= position < starts[high]; empty keys make several starts equal, so find the last.
        while high - low > 1 {
            let middle = (low + high) / 2
            if Int(starts[middle]) <= position { low = middle } else { high = middle }
        }
        return low
    }
}
