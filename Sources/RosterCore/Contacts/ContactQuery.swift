/// A query folded once into the byte forms the matcher compares, so a search over many contacts allocates
/// nothing per contact.
struct ContactQuery: Sendable {
    /// The folded query as UTF-8; compared with the folded name.
    let folded: [UInt8]
    /// `folded` without spaces; compared with the space-free pinyin and the initials ("zhang san", "n v a").
    let compact: [UInt8]
    /// The query's digits when it looks like a phone number (digits and phone punctuation only), else empty.
    let digits: [UInt8]

    init(_ query: String) {
        let folded = ContactFolding.fold(query)
        self.folded = Array(folded.utf8)
        self.compact = self.folded.filter { $0 != 0x20 }
        self.digits = ContactQuery.looksLikePhone(query) ? Array(ContactSearchKeys.digits(query).utf8) : []
    }

    /// An empty query lists everything.
    var isEmpty: Bool { folded.isEmpty }

    /// Phone punctuation is ignored (protocol.md "Search"), so "010-99" finds "+1 (555) 010-9999"; a query with any
    /// letter is a name query only, or "a1" would find every phone with a 1.
    private static func looksLikePhone(_ query: String) -> Bool {
        var sawDigit = false
        for scalar in query.unicodeScalars {
            if scalar.properties.numericType == .decimal {
                sawDigit = true
            } else if !(" +-().".unicodeScalars.contains(scalar) || scalar.properties.isWhitespace) {
                return false
            }
        }
        return sawDigit
    }
}
