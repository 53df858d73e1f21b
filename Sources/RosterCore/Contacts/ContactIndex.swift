/// One user's contacts, packed for search (protocol.md "Search"; 100,000 contacts at a p99 of 5 ms).
///
/// Why in memory: the matching rule (substring of a folded name, prefixes of three kinds of initials and
/// of pinyin, substring of phone digits) fits no SQLite index — `LIKE '%q%'` scans anyway, and FTS5's
/// tokenizers know neither pinyin nor jamo — so every search is a scan, and a scan is cheapest over
/// contiguous bytes. The keys were folded when each contact was written, so a search runs no ICU and
/// makes no `String` per contact.
///
/// Layout: each of the six keys of `ContactSearchKeys` has its own `KeyColumn`, all contacts' UTF-8 back to
/// back, indexed by slot (slots are handed out in insertion order). A search runs `memchr` for the query's
/// first byte over a whole column, verifies each hit and maps it to its slot, keeping the best rank per
/// slot in a scratch byte array; columns that cannot match (pinyin for a non-ASCII query, Hangul initials
/// for a query not starting with a compatibility jamo, digits for a non-phone query) are skipped. `order`
/// keeps the live slots sorted by folded name, then id, so listing is a slice, and walking it deals the
/// matches out by rank with ties already broken, stopping once the requested page is full.
/// `ContactMatcher.rank` states the same rule one contact at a time and is the model the tests check
/// this index against.
///
/// Memory per contact: its key bytes (about 20–60 for typical names; a Han name adds its pinyin) + 24 of
/// column starts + 8 id + 1 liveness + 4 in `order` + about 25 for the id → slot dictionary: roughly
/// 90–120 bytes, about 10–12 MB for 100,000 contacts, plus 1 byte per slot of scratch during a search.
/// Updates and removals leave dead slots behind; they are compacted once they outnumber the live ones.
public struct ContactIndex: Sendable {
    private var ids: [Int64] = []
    private var live: [Bool] = []
    private var folded = KeyColumn()
    private var initials = KeyColumn()
    private var pinyin = KeyColumn()
    private var pinyinInitials = KeyColumn()
    private var hangulInitials = KeyColumn()
    private var phoneDigits = KeyColumn()
    private var slotOfID: [Int64: Int32] = [:]
    /// Live slots sorted by (folded name bytes, id).
    private var order: [Int32] = []

    private static let unmatched = UInt8.max

    public init() {}

    /// Builds the index in one go, sorting once: the way to load a user's contacts from the store.
    public init(_ entries: [(id: Int64, keys: ContactSearchKeys)]) {
        upsert(contentsOf: entries)
    }

    /// The number of contacts.
    public var count: Int { order.count }

    public func contains(id: Int64) -> Bool { slotOfID[id] != nil }

    /// Adds the contact, or replaces its keys if the id is already there.
    public mutating func upsert(id: Int64, keys: ContactSearchKeys) {
        if slotOfID[id] != nil { remove(id: id) }
        let slot = append(id: id, keys: keys)
        order.insert(slot, at: insertionPoint(of: slot))
    }

    /// Many at once (an import, or loading at log-in): only the new contacts are sorted, then merged into
    /// `order` by block copies at binary-searched points. Re-sorting the whole order instead cost a 64 KiB
    /// import into a book of 100,000 about 25 ms on the loop (roster-bench's loop-stall figure); this costs
    /// k·log k + k·log n comparisons and one pass of copying.
    public mutating func upsert(contentsOf entries: [(id: Int64, keys: ContactSearchKeys)]) {
        guard entries.count > 64 else {
            for entry in entries { upsert(id: entry.id, keys: entry.keys) }
            return
        }
        var replacedAny = false
        var fresh: [Int32] = []
        fresh.reserveCapacity(entries.count)
        for entry in entries {
            if let old = slotOfID[entry.id] {
                kill(slot: Int(old))
                replacedAny = true
            }
            fresh.append(append(id: entry.id, keys: entry.keys))
        }
        if replacedAny {
            order.removeAll { !live[Int($0)] }
            fresh.removeAll { !live[Int($0)] }
        }
        folded.bytes.withUnsafeBufferPointer { names in
            folded.starts.withUnsafeBufferPointer { starts in
                ids.withUnsafeBufferPointer { ids in
                    fresh.sort { Self.precedes($0, $1, names, starts, ids) }
                    order = Self.merged(order, fresh, names, starts, ids)
                }
            }
        }
        compactIfSparse()
    }

    /// `existing` and `fresh`, both sorted, as one sorted order.
    private static func merged(_ existing: [Int32], _ fresh: [Int32], _ names: UnsafeBufferPointer<UInt8>,
                               _ starts: UnsafeBufferPointer<UInt32>, _ ids: UnsafeBufferPointer<Int64>) -> [Int32] {
        guard !existing.isEmpty else { return fresh }
        var result: [Int32] = []
        result.reserveCapacity(existing.count + fresh.count)
        var copied = 0
        for slot in fresh {
            var low = copied
            var high = existing.count
            while low < high {
                let middle = (low + high) / 2
                if precedes(existing[middle], slot, names, starts, ids) { low = middle + 1 } else { high = middle }
            }
            result.append(contentsOf: existing[copied..<low])
            result.append(slot)
            copied = low
        }
        result.append(contentsOf: existing[copied...])
        return result
    }

    /// Removing an unknown id does nothing, so a runtime can replay a change it is unsure about.
    public mutating func remove(id: Int64) {
        guard let slot = slotOfID[id] else { return }
        let position = insertionPoint(of: slot)
        if position < order.count && order[position] == slot { order.remove(at: position) }
        kill(slot: Int(slot))
        compactIfSparse()
    }

    /// The keys a contact was indexed by, read back from the columns; nil for an id not in the index.
    public func keys(of id: Int64) -> ContactSearchKeys? {
        guard let slot = slotOfID[id].map(Int.init) else { return nil }
        func text(_ column: KeyColumn) -> String { String(decoding: column.key(slot), as: UTF8.self) }
        return ContactSearchKeys(folded: text(folded), initials: text(initials), pinyin: text(pinyin),
                                 pinyinInitials: text(pinyinInitials), hangulInitials: text(hangulInitials),
                                 phoneDigits: text(phoneDigits))
    }

    /// Every contact sorted by folded name, then id; `total` is the number of contacts.
    public func list(limit: Int, offset: Int) -> (ids: [Int64], total: Int) {
        let start = min(max(offset, 0), order.count)
        let end = min(start + max(limit, 0), order.count)
        return (order[start..<end].map { ids[Int($0)] }, order.count)
    }

    /// The page `offset..<offset+limit` of the matches, best rank first, then by folded name and id;
    /// `total` counts every match. An empty (or all-blank) query is `list`.
    public func search(query: String, limit: Int, offset: Int) -> (ids: [Int64], total: Int) {
        let query = ContactQuery(query)
        if query.isEmpty { return list(limit: limit, offset: offset) }
        let ranks = rankSlots(query)
        var counts = [Int](repeating: 0, count: ContactMatcher.contains + 1)
        ranks.withUnsafeBufferPointer { ranks in
            live.withUnsafeBufferPointer { live in
                for slot in 0..<ranks.count where ranks[slot] != Self.unmatched && live[slot] {
                    counts[Int(ranks[slot])] += 1
                }
            }
        }
        let total = counts.reduce(0, +)
        let pageStart = min(max(offset, 0), total)
        let pageEnd = min(pageStart + max(limit, 0), total)
        guard pageStart < pageEnd else { return ([], total) }

        // The matches of rank r take positions bucketStart[r] ..< bucketStart[r] + counts[r] of the result.
        var bucketStart = [Int](repeating: 0, count: counts.count)
        for rank in 1..<counts.count { bucketStart[rank] = bucketStart[rank - 1] + counts[rank - 1] }
        var page = [Int64](repeating: 0, count: pageEnd - pageStart)
        var seen = [Int](repeating: 0, count: counts.count)
        var filled = 0
        ranks.withUnsafeBufferPointer { ranks in
            for slot in order {
                let rank = Int(ranks[Int(slot)])
                if rank == Int(Self.unmatched) { continue }
                let position = bucketStart[rank] + seen[rank]
                seen[rank] += 1
                if position >= pageStart && position < pageEnd {
                    page[position - pageStart] = ids[Int(slot)]
                    filled += 1
                    if filled == page.count { break }
                }
            }
        }
        return (page, total)
    }

    /// The best rank of every slot (dead ones included; callers skip them), one column at a time.
    private func rankSlots(_ query: ContactQuery) -> [UInt8] {
        var ranks = [UInt8](repeating: Self.unmatched, count: ids.count)
        ranks.withUnsafeMutableBufferPointer { ranks in
            func offer(_ slot: Int, _ rank: Int) {
                if Int(ranks[slot]) > rank { ranks[slot] = UInt8(rank) }
            }
            query.folded.withUnsafeBufferPointer { needle in
                folded.bytes.withUnsafeBufferPointer { names in
                    folded.scan(needle, prefixOnly: false) { slot, position, start, end in
                        if position == start {
                            offer(slot, end - start == needle.count ? ContactMatcher.exact : ContactMatcher.prefix)
                            return true
                        }
                        if ByteSearch.isSeparator(names[position - 1]) {
                            offer(slot, ContactMatcher.prefix)
                            return true
                        }
                        offer(slot, ContactMatcher.contains)
                        // A later occurrence may still start a word.
                        return false
                    }
                }
            }
            query.compact.withUnsafeBufferPointer { compact in
                guard let first = compact.first else { return }
                if first < 0x80 {
                    pinyin.scan(compact, prefixOnly: true) { slot, _, start, end in
                        offer(slot, end - start == compact.count ? ContactMatcher.exact : ContactMatcher.prefix)
                        return true
                    }
                    pinyinInitials.scan(compact, prefixOnly: true) { slot, _, _, _ in
                        offer(slot, ContactMatcher.initials)
                        return true
                    }
                }
                initials.scan(compact, prefixOnly: true) { slot, _, _, _ in
                    offer(slot, ContactMatcher.initials)
                    return true
                }
                // Compatibility jamo are U+3131–U+318E, all led by 0xE3 in UTF-8.
                if first == 0xE3 {
                    hangulInitials.scan(compact, prefixOnly: true) { slot, _, _, _ in
                        offer(slot, ContactMatcher.initials)
                        return true
                    }
                }
            }
            query.digits.withUnsafeBufferPointer { digits in
                phoneDigits.scan(digits, prefixOnly: false) { slot, _, _, _ in
                    offer(slot, ContactMatcher.contains)
                    return true
                }
            }
        }
        return ranks
    }

    private mutating func append(id: Int64, keys: ContactSearchKeys) -> Int32 {
        let slot = Int32(ids.count)
        ids.append(id)
        live.append(true)
        folded.append(keys.folded.utf8)
        initials.append(keys.initials.utf8)
        pinyin.append(keys.pinyin.utf8)
        pinyinInitials.append(keys.pinyinInitials.utf8)
        hangulInitials.append(keys.hangulInitials.utf8)
        phoneDigits.append(keys.phoneDigits.utf8)
        slotOfID[id] = slot
        return slot
    }

    private mutating func kill(slot: Int) {
        live[slot] = false
        slotOfID[ids[slot]] = nil
    }

    /// Where `slot` belongs in `order` (or is, when it is already there).
    private func insertionPoint(of slot: Int32) -> Int {
        folded.bytes.withUnsafeBufferPointer { names in
            folded.starts.withUnsafeBufferPointer { starts in
                ids.withUnsafeBufferPointer { ids in
                    var low = 0
                    var high = order.count
                    while low < high {
                        let middle = (low + high) / 2
                        if Self.precedes(order[middle], slot, names, starts, ids) {
                            low = middle + 1
                        } else {
                            high = middle
                        }
                    }
                    return low
                }
            }
        }
    }

    /// Folded name bytes first (UTF-8 order is code point order), then id, which makes the order total.
    private static func precedes(_ a: Int32, _ b: Int32, _ names: UnsafeBufferPointer<UInt8>,
                                 _ starts: UnsafeBufferPointer<UInt32>, _ ids: UnsafeBufferPointer<Int64>) -> Bool {
        var indexA = Int(starts[Int(a)])
        let endA = Int(starts[Int(a) + 1])
        var indexB = Int(starts[Int(b)])
        let endB = Int(starts[Int(b) + 1])
        while indexA < endA && indexB < endB {
            if names[indexA] != names[indexB] { return names[indexA] < names[indexB] }
            indexA += 1
            indexB += 1
        }
        if (endA - indexA) != (endB - indexB) { return indexA == endA }
        return ids[Int(a)] < ids[Int(b)]
    }

    /// Dead slots keep their bytes until they outnumber the live ones; then every column is rewritten,
    /// which keeps an update O(1) amortized apart from its shift of `order`.
    private mutating func compactIfSparse() {
        let dead = ids.count - order.count
        guard dead > 1024 && dead > order.count else { return }
        var newSlot = [Int32](repeating: -1, count: ids.count)
        var packed = ContactIndex()
        let columns: [WritableKeyPath<ContactIndex, KeyColumn>] = [\.folded, \.initials, \.pinyin,
                                                                   \.pinyinInitials, \.hangulInitials, \.phoneDigits]
        for column in columns { packed[keyPath: column].reserve(bytes: self[keyPath: column].bytes.count,
                                                                 slots: order.count) }
        for slot in 0..<ids.count where live[slot] {
            newSlot[slot] = Int32(packed.ids.count)
            packed.ids.append(ids[slot])
            packed.live.append(true)
            for column in columns { packed[keyPath: column].append(self[keyPath: column].key(slot)) }
            packed.slotOfID[ids[slot]] = newSlot[slot]
        }
        packed.order = order.map { newSlot[Int($0)] }
        self = packed
    }
}
