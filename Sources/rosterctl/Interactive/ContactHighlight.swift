import RosterCore

/// Which characters of a listed contact to highlight for a query, by the daemon's own folding.
///
/// The daemon says only that a contact matched, not where. The parts a person can see are found again here:
/// the folded query inside the folded name (case, width and diacritics ignored, preferring a word start, as
/// the ranking does), else the word initials it starts, and the query's digits inside the phone. A match by
/// pinyin or Hangul initials has no visible counterpart in the name, so nothing is highlighted for it rather
/// than something wrong.
enum ContactHighlight {
    /// Ranges of character offsets into `name`.
    static func name(_ name: String, query: String) -> [Range<Int>] {
        let needle = Array(ContactSearchKeys.foldQuery(query).unicodeScalars)
        guard !needle.isEmpty else { return [] }
        // The folded name, scalar by scalar, each with the offset of the character it came from.
        var folded: [Unicode.Scalar] = []
        var source: [Int] = []
        for (offset, character) in name.enumerated() {
            if character.isWhitespace {
                // Runs of blanks fold to one space, as they do in the daemon's keys.
                if let last = folded.last, last != " " {
                    folded.append(" ")
                    source.append(offset)
                }
                continue
            }
            for scalar in ContactSearchKeys.foldQuery(String(character)).unicodeScalars {
                folded.append(scalar)
                source.append(offset)
            }
        }
        let starts = folded.indices.filter { folded[$0...].starts(with: needle) }
        let atWord = starts.first { $0 == 0 || isWordSeparator(folded[$0 - 1]) }
        if let start = atWord ?? starts.first {
            return [source[start]..<(source[start + needle.count - 1] + 1)]
        }
        // Initials: "as" → the A of Alice and the S of Smith.
        let compact = needle.filter { $0 != " " }
        let wordStarts = folded.indices.filter { !isWordSeparator(folded[$0]) && ($0 == 0 || isWordSeparator(folded[$0 - 1])) }
        guard compact.count > 1, compact.count <= wordStarts.count,
              zip(compact, wordStarts).allSatisfy({ $0 == folded[$1] }) else { return [] }
        return wordStarts.prefix(compact.count).map { source[$0]..<(source[$0] + 1) }
    }

    /// Ranges of character offsets into `phone`: the digits the query's digits match, when the query is a phone
    /// number or part of one (digits with spaces, dashes, brackets or a plus, as the daemon compares them).
    static func phone(_ phone: String, query: String) -> [Range<Int>] {
        let allowed = Set<Character>(" +-()")
        guard query.contains(where: \.isASCIIDigit), query.allSatisfy({ $0.isASCIIDigit || allowed.contains($0) }) else { return [] }
        let needle = query.filter(\.isASCIIDigit)
        let digits = phone.enumerated().filter { $0.element.isASCIIDigit }
        let haystack = digits.map(\.element)
        guard let start = haystack.indices.first(where: { haystack[$0...].starts(with: needle) }) else { return [] }
        return digits[start..<(start + needle.count)].map { $0.offset..<($0.offset + 1) }
    }

    /// As the daemon's word split: a word starts after a space or ASCII punctuation.
    private static func isWordSeparator(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && !(scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
