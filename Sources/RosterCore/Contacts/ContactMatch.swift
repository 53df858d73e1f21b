// ContactMatch — which characters of a found contact a query matched, said by the daemon with its results so
// that a page or a terminal marks them without folding the name again (and so can never drift from the search).
//
// RULES (the same comparisons as ContactMatcher, in the same order of preference)
//   • The folded query inside the folded name, at a word start if there is one, else the first occurrence:
//     the name's characters that folded into it. "dang" marks all of "Đặng"; "ali" the "Ali" of "Alice".
//   • Else the query starts the word initials: the first character of each of those words ("nva" → N, V, Á).
//   • Else it starts the Hangul initials: those syllables ("ㄱㅅ" → 김, 수).
//   • Else, for a name with Han characters, it starts the pinyin initials or the pinyin: the characters whose
//     syllables it covers, a Han character whole even when the query ends inside its syllable ("zs" and
//     "zhangs" → 张三; "zhang" → 张). A Latin word in such a name is one syllable of the reading.
//   • Else its digits inside the phone's digits: one range in the phone, from the first matched digit to the
//     last, the punctuation between them included, as a person reads a number.
//   • Else (the list, an empty query, or a reading that does not line up with the name's characters) nothing.
//
// THEORY OF OPERATION
//   Only the contacts of a page are described, after the index chose them, so this may fold one character at a
//   time (microseconds each). It never runs ICU's Han transform (~130 µs a name): a Han name's reading comes from
//   its stored keys, the pinyin run together and its initials, split again into syllables with the table of every
//   syllable ICU gives (`PinyinSyllables`), each Han character's starting with its initial. Offsets are UTF-16 code units of the field as stored, which is what a page's JavaScript strings index by.
import Foundation

/// Which characters of one found contact's name or phone the query matched.
public struct ContactMatch: Equatable, Sendable {
    /// The field the ranges are in.
    public enum Field: String, Sendable {
        case name
        case phone
    }

    public var field: Field
    /// Ranges of UTF-16 code units of the field, ascending and apart.
    public var ranges: [Range<Int>]

    public init(field: Field, ranges: [Range<Int>]) {
        self.field = field
        self.ranges = ranges
    }

    /// The match of `query` in a contact with `name`, `phone` and the search `keys` they were indexed by; nil when
    /// nothing of it can be marked.
    public static func describe(query: String, name: String, phone: String?, keys: ContactSearchKeys) -> ContactMatch? {
        let query = ContactQuery(query)
        guard !query.isEmpty else { return nil }
        let characters = FoldedName(name)
        let marked = characters.occurrence(of: query.folded)
            ?? characters.initials(query.compact)
            ?? characters.hangulInitials(query.compact)
            ?? characters.reading(query.compact, pinyin: Array(keys.pinyin.utf8), initials: Array(keys.pinyinInitials.utf8))
        if let marked, !marked.isEmpty {
            return ContactMatch(field: .name, ranges: characters.utf16Ranges(marked))
        }
        if let phone, let range = phoneRange(query.digits, in: phone) {
            return ContactMatch(field: .phone, ranges: [range])
        }
        return nil
    }

    private static func phoneRange(_ digits: [UInt8], in phone: String) -> Range<Int>? {
        guard !digits.isEmpty else { return nil }
        // Each of the phone's decimal digits, as ASCII, with the UTF-16 range of the character it is.
        var found: [(digit: UInt8, range: Range<Int>)] = []
        var offset = 0
        for character in phone {
            let width = character.utf16.count
            let value = ContactSearchKeys.digits(String(character)).utf8
            if value.count == 1, let digit = value.first { found.append((digit, offset..<(offset + width))) }
            offset += width
        }
        guard digits.count <= found.count else { return nil }
        for start in 0...(found.count - digits.count)
        where zip(digits, found[start..<(start + digits.count)]).allSatisfy({ $0 == $1.digit }) {
            return found[start].range.lowerBound..<found[start + digits.count - 1].range.upperBound
        }
        return nil
    }
}

/// A name character by character, each with what it folds to, so a match in the folded name maps back.
struct FoldedName {
    struct Piece {
        /// What the character contributes to the folded name (a blank run gives one space, or nothing first).
        var folded: [UInt8]
        var utf16: Range<Int>
        var character: Character
    }

    var pieces: [Piece] = []

    init(_ name: String) {
        var offset = 0
        var afterText = false
        for character in name {
            let width = character.utf16.count
            defer { offset += width }
            let folded: [UInt8]
            if character.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
                // A run of blanks folds to one space, given to its first blank; none before the first word.
                folded = afterText ? [0x20] : []
                afterText = false
            } else {
                folded = FoldedName.foldsToItself(character)
                    ? Array(String(character).utf8) : Array(ContactFolding.fold(String(character)).utf8)
                afterText = afterText || !folded.isEmpty
            }
            pieces.append(Piece(folded: folded, utf16: offset..<(offset + width), character: character))
        }
    }

    /// A Han ideograph or a precomposed Hangul syllable has no case, no marks and no compatibility mapping, so it
    /// folds to itself: most characters of a CJK name skip Foundation's folding, which costs tens of µs a call.
    static func foldsToItself(_ character: Character) -> Bool {
        let scalars = character.unicodeScalars
        guard scalars.count == 1, let scalar = scalars.first else { return false }
        switch scalar.value {
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0x20000...0x2EBEF, 0x30000...0x323AF: return true
        default: return false
        }
    }

    /// The pieces whose folded bytes hold `needle`, preferring an occurrence at a word start.
    func occurrence(of needle: [UInt8]) -> [Int]? {
        var bytes: [UInt8] = []
        var owner: [Int] = []
        for (index, piece) in pieces.enumerated() {
            bytes += piece.folded
            owner += Array(repeating: index, count: piece.folded.count)
        }
        guard !needle.isEmpty, needle.count <= bytes.count else { return nil }
        var first: Int?
        for start in 0...(bytes.count - needle.count) where bytes[start..<(start + needle.count)].elementsEqual(needle) {
            if start == 0 || ByteSearch.isSeparator(bytes[start - 1]) { return marked(owner, start, needle.count) }
            if first == nil { first = start }
        }
        return first.map { marked(owner, $0, needle.count) }
    }

    /// An occurrence is one run of bytes, so every piece from its first byte's to its last byte's is in it: the
    /// blanks between words too, those that folded to nothing included.
    private func marked(_ owner: [Int], _ start: Int, _ count: Int) -> [Int] {
        Array(owner[start]...owner[start + count - 1])
    }

    /// The first piece of each word of the folded name, as `ContactSearchKeys.wordInitials` splits words.
    private var wordStarts: [Int] {
        var starts: [Int] = []
        var atWordStart = true
        for (index, piece) in pieces.enumerated() {
            for byte in piece.folded {
                if ByteSearch.isSeparator(byte) {
                    atWordStart = true
                } else if atWordStart {
                    // A word's first scalar may be several bytes; the piece is what is marked.
                    if starts.last != index { starts.append(index) }
                    atWordStart = false
                }
            }
        }
        return starts
    }

    func initials(_ compact: [UInt8]) -> [Int]? {
        let starts = wordStarts
        var initials: [UInt8] = []
        var used: [Int] = []
        for index in starts {
            guard initials.count < compact.count else { break }
            // The word's first scalar, as the initials key holds it.
            let scalar = String(decoding: pieces[index].folded, as: UTF8.self).unicodeScalars
                .first { !($0.isASCII && ByteSearch.isSeparator(UInt8($0.value))) }
            guard let scalar else { continue }
            initials += Array(String(scalar).utf8)
            used.append(index)
        }
        guard !compact.isEmpty, initials == compact else { return nil }
        return used
    }

    func hangulInitials(_ compact: [UInt8]) -> [Int]? {
        guard compact.first == 0xE3 else { return nil }
        var leads: [UInt8] = []
        var used: [Int] = []
        for (index, piece) in pieces.enumerated() where leads.count < compact.count {
            let lead = HangulInitials.of(String(piece.character).precomposedStringWithCanonicalMapping)
            guard !lead.isEmpty else { continue }
            leads += Array(lead.utf8)
            used.append(index)
        }
        return leads == compact ? used : nil
    }

    /// A Han name's reading: its syllables lined up with the name's Han characters and Latin words.
    func reading(_ compact: [UInt8], pinyin: [UInt8], initials: [UInt8]) -> [Int]? {
        guard let first = compact.first, first < 0x80, !initials.isEmpty else { return nil }
        // The name's units as HanReading splits its reading: each Han character, each run of characters that
        // fold to ASCII letters and digits; anything else parts them.
        var units: [[Int]] = []
        var inWord = false
        for (index, piece) in pieces.enumerated() {
            if piece.character.unicodeScalars.contains(where: HanReading.isHan) {
                units.append([index])
                inWord = false
            } else if !piece.folded.isEmpty, piece.folded.allSatisfy({ $0 < 0x80 && !ByteSearch.isSeparator($0) }) {
                if inWord, let last = units.indices.last { units[last].append(index) } else { units.append([index]) }
                inWord = true
            } else {
                inWord = false
            }
        }
        guard units.count == initials.count else { return nil }
        if compact.count <= initials.count && initials.starts(with: compact) {
            return units.prefix(compact.count).map { $0[0] }
        }
        guard pinyin.starts(with: compact), let lengths = syllableLengths(units, pinyin, initials) else { return nil }
        var marked: [Int] = []
        var covered = 0
        for (unit, length) in zip(units, lengths) where covered < compact.count {
            let wanted = min(length, compact.count - covered)
            if unit.count == 1 {
                marked.append(unit[0])
            } else {
                // A Latin word: the characters its first `wanted` folded bytes come from.
                var taken = 0
                for index in unit where taken < wanted {
                    marked.append(index)
                    taken += pieces[index].folded.count
                }
            }
            covered += wanted
        }
        return marked
    }

    /// The length of each unit's syllable in `pinyin`: a Latin word is its folded letters, a Han character a
    /// syllable of the table starting with its initial; the longest syllables first, the first split that uses
    /// up the whole key. Nil when none does (a reading this table does not know).
    private func syllableLengths(_ units: [[Int]], _ pinyin: [UInt8], _ initials: [UInt8]) -> [Int]? {
        var lengths: [Int] = []
        func split(_ unit: Int, _ at: Int) -> Bool {
            if unit == units.count { return at == pinyin.count }
            let word = units[unit]
            if word.count == 1 && pieces[word[0]].character.unicodeScalars.contains(where: HanReading.isHan) {
                guard at < pinyin.count, pinyin[at] == initials[unit] else { return false }
                for length in stride(from: min(PinyinSyllables.longest, pinyin.count - at), through: 1, by: -1)
                where PinyinSyllables.all.contains(String(decoding: pinyin[at..<(at + length)], as: UTF8.self)) {
                    lengths.append(length)
                    if split(unit + 1, at + length) { return true }
                    lengths.removeLast()
                }
                return false
            }
            let letters = word.flatMap { pieces[$0].folded }
            guard pinyin[at...].starts(with: letters) else { return false }
            lengths.append(letters.count)
            if split(unit + 1, at + letters.count) { return true }
            lengths.removeLast()
            return false
        }
        return split(0, 0) ? lengths : nil
    }

    /// The pieces' UTF-16 ranges, neighbours joined.
    func utf16Ranges(_ indices: [Int]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        for index in indices.sorted() {
            let range = pieces[index].utf16
            if let last = ranges.last, last.upperBound == range.lowerBound {
                ranges[ranges.count - 1] = last.lowerBound..<range.upperBound
            } else {
                ranges.append(range)
            }
        }
        return ranges
    }
}
