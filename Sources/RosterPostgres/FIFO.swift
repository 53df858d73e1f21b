/// A first-in-first-out queue whose `popFirst` does not move what is behind: a caller may park thousands of
/// requests behind one connection, and `Array.removeFirst` would make draining them quadratic.
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        // Reclaim the front once it is most of the storage, so that a queue that never empties stays small.
        if head > 64 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Everything in order, leaving the queue empty.
    mutating func drain() -> [Element] {
        defer { storage.removeAll(); head = 0 }
        return Array(storage[head...])
    }
}
