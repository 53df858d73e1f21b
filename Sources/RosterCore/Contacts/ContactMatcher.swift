/// Whether and how well a query matches a contact (protocol.md "Search"): the lower the rank, the better the match.
public enum ContactMatcher {
    /// The folded name, or the pinyin, equals the query.
    public static let exact = 0
    /// The folded name or one of its words, or the pinyin, starts with the query.
    public static let prefix = 1
    /// The query starts the word initials, the pinyin initials or the Hangul initials.
    public static let initials = 2
    /// The query is inside the folded name, or its digits are inside the phone's digits.
    public static let contains = 3

    /// The rank of `keys` for `query`, `nil` when it does not match; an empty query matches all as `exact`.
    /// Meant for one contact at a time; `ContactIndex` runs the same comparison over its packed keys.
    public static func rank(query: String, keys: ContactSearchKeys) -> Int? {
        let query = ContactQuery(query)
        let fields = [keys.folded, keys.initials, keys.pinyin, keys.pinyinInitials, keys.hangulInitials,
                      keys.phoneDigits].map { Array($0.utf8) }
        return fields[0].withUnsafeBufferPointer { folded in
            fields[1].withUnsafeBufferPointer { initials in
                fields[2].withUnsafeBufferPointer { pinyin in
                    fields[3].withUnsafeBufferPointer { pinyinInitials in
                        fields[4].withUnsafeBufferPointer { hangulInitials in
                            fields[5].withUnsafeBufferPointer { phoneDigits in
                                rank(query, PackedKeys(folded: folded, initials: initials, pinyin: pinyin,
                                                       pinyinInitials: pinyinInitials,
                                                       hangulInitials: hangulInitials, phoneDigits: phoneDigits))
                            }
                        }
                    }
                }
            }
        }
    }

    /// The one ranking rule, over borrowed bytes so the index can run it on its arena without copying.
    static func rank(_ query: ContactQuery, _ keys: PackedKeys) -> Int? {
        if query.isEmpty { return exact }
        return query.folded.withUnsafeBufferPointer { folded in
            query.compact.withUnsafeBufferPointer { compact in
                query.digits.withUnsafeBufferPointer { digits in
                    rank(folded: folded, compact: compact, digits: digits, keys)
                }
            }
        }
    }

    static func rank(folded query: UnsafeBufferPointer<UInt8>, compact: UnsafeBufferPointer<UInt8>,
                     digits: UnsafeBufferPointer<UInt8>, _ keys: PackedKeys) -> Int? {
        if ByteSearch.equal(keys.folded, query) || (!compact.isEmpty && ByteSearch.equal(keys.pinyin, compact)) {
            return exact
        }
        var best = Int.max
        if !compact.isEmpty && ByteSearch.hasPrefix(keys.pinyin, compact) { best = prefix }
        if best > prefix {
            switch ByteSearch.bestOccurrence(of: query, in: keys.folded) {
            case .wordStart: best = prefix
            case .inside: best = contains
            case .none: break
            }
        }
        if best > initials && !compact.isEmpty
            && (ByteSearch.hasPrefix(keys.initials, compact) || ByteSearch.hasPrefix(keys.pinyinInitials, compact)
                || ByteSearch.hasPrefix(keys.hangulInitials, compact)) {
            best = initials
        }
        if best > contains && !digits.isEmpty && ByteSearch.contains(digits, in: keys.phoneDigits) {
            best = contains
        }
        return best == Int.max ? nil : best
    }
}

/// One contact's keys as borrowed UTF-8, in the order `ContactIndex` packs them.
struct PackedKeys {
    var folded: UnsafeBufferPointer<UInt8>
    var initials: UnsafeBufferPointer<UInt8>
    var pinyin: UnsafeBufferPointer<UInt8>
    var pinyinInitials: UnsafeBufferPointer<UInt8>
    var hangulInitials: UnsafeBufferPointer<UInt8>
    var phoneDigits: UnsafeBufferPointer<UInt8>
}
