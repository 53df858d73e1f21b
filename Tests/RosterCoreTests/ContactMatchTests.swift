import Testing
@testable import RosterCore

@Suite("Contacts search: which characters matched")
struct ContactMatchTests {
    /// The marked text of `name` (or `phone`) for `query`, one string per range, as a page would mark it.
    private func marks(_ query: String, name: String, phone: String? = nil) -> (ContactMatch.Field?, [String]) {
        guard let match = describe(query, name, phone) else { return (nil, []) }
        let text = Array((match.field == .name ? name : phone ?? "").utf16)
        return (match.field, match.ranges.map { String(decoding: text[$0], as: UTF16.self) })
    }

    /// As the daemon describes a found contact: with the keys it was indexed by, read back from the index.
    private func describe(_ query: String, _ name: String, _ phone: String?) -> ContactMatch? {
        let index = ContactIndex([(id: 1, keys: ContactSearchKeys(name: name, phone: phone))])
        guard let keys = index.keys(of: 1) else { return nil }
        #expect(keys == ContactSearchKeys(name: name, phone: phone))
        return ContactMatch.describe(query: query, name: name, phone: phone, keys: keys)
    }

    @Test(arguments: [
        // Pinyin initials and pinyin: every Han character whose syllable the query reaches.
        ("zs", "张三", ["张三"]),
        ("z", "张三", ["张"]),
        ("zhang", "张三", ["张"]),
        ("zhangs", "张三", ["张三"]),
        ("zhangsan", "张三", ["张三"]),
        ("shan", "单田芳", ["单"]),
        ("stf", "单田芳", ["单田芳"]),
        ("shantian", "单田芳", ["单田"]),
        ("wangwu", "王五", ["王五"]),
        ("xian", "西安", ["西安"]),
        ("xi", "西安", ["西"]),
        // A Latin word in a Han name is one syllable of its reading.
        ("tzs", "Tom 张三", ["T", "张三"]),
        ("tomzh", "Tom 张三", ["Tom", "张"]),
        // The folded name: case, width, diacritics, and đ as d.
        ("dang", "Đặng Thu Thảo", ["Đặng"]),
        ("thao", "Đặng Thu Thảo", ["Thảo"]),
        ("nguyen v", "Nguyễn Văn Ánh", ["Nguyễn V"]),
        ("e  s", "Alice  Smith", ["e  S"]),
        ("ＡＬＩ", "Alice Smith", ["Ali"]),
        // A word start wins over an earlier occurrence inside a word.
        ("ann", "Joanne Ann", ["Ann"]),
        ("oan", "Joanne Ann", ["oan"]),
        // Word initials.
        ("nva", "Nguyễn Văn Ánh", ["N", "V", "Á"]),
        ("as", "Alice Smith", ["A", "S"]),
        ("jlp", "Jean-Luc Picard", ["J", "L", "P"]),
        // Hangul initial consonants, and the syllables themselves.
        ("ㄱㅅ", "김수현", ["김수"]),
        ("ㄱㅅㅎ", "김수현", ["김수현"]),
        ("수현", "김수현", ["수현"]),
        ("ㅅ", "박 수진", []),
    ])
    func nameMarks(query: String, name: String, expected: [String]) {
        let (field, marked) = marks(query, name: name)
        #expect(marked == expected)
        #expect(field == (expected.isEmpty ? nil : .name))
    }

    @Test func offsetsAreUTF16CodeUnits() {
        // 𠀋 (U+2000B) is two UTF-16 units; the range after it starts at 2.
        #expect(describe("ab", "𠀋 Ab", nil)
            == ContactMatch(field: .name, ranges: [3..<5]))
        #expect(describe("zs", "张三", nil)
            == ContactMatch(field: .name, ranges: [0..<2]))
        // Decomposed Hangul: 김 as three jamo is three code units, one character.
        let decomposed = "\u{1100}\u{1175}\u{11B7}\u{1109}\u{116E}"
        #expect(describe("ㄱㅅ", decomposed, nil)
            == ContactMatch(field: .name, ranges: [0..<5]))
    }

    /// The shortcut that skips Foundation's folding for CJK characters gives what the folding gives.
    @Test func cjkCharactersFoldToThemselves() {
        for range in [0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0x20000...0x2EBEF, 0x30000...0x323AF] {
            for value in stride(from: range.lowerBound, through: range.upperBound, by: 37) {
                guard let scalar = Unicode.Scalar(UInt32(value)) else { continue }
                let character = Character(scalar)
                #expect(FoldedName.foldsToItself(character))
                #expect(ContactFolding.fold(String(character)) == String(character), "U+\(String(value, radix: 16))")
            }
        }
        // U+F900, a compatibility ideograph: NFKC maps it to U+8C48, so it takes the long way.
        #expect(!FoldedName.foldsToItself("\u{F900}"))
    }

    @Test func phoneDigitsAreOneRangeFromFirstToLast() {
        let (field, marked) = marks("555010", name: "Alice Smith", phone: "+1 (555) 010-9999")
        #expect(field == .phone && marked == ["555) 010"])
        #expect(marks("010-99", name: "Bob", phone: "０１０ ９９").1 == ["０１０ ９９"])
        #expect(marks("777", name: "Bob", phone: "+1 (555) 010-9999").1 == [])
    }

    @Test func nothingForAnEmptyQueryOrOneThatDoesNotMatch() {
        #expect(describe("", "张三", nil) == nil)
        #expect(describe("   ", "张三", nil) == nil)
        #expect(describe("xyz", "张三", "123") == nil)
    }

    /// Whatever the index finds, the description marks something of it, for every contact of the search tests.
    @Test func everyMatchTheMatcherFindsIsMarked() {
        let names = ["张三", "王五", "김수현", "Nguyễn Văn Ánh", "Đặng Thu Thảo", "Alice Smith", "Jean-Luc Picard",
                     "单田芳", "Tom 张三"]
        let queries = ["zs", "z", "w", "wangwu", "ㄱ", "ㄱㅅ", "nguyen", "van", "nva", "dang", "dtt", "a", "as", "smi",
                       "jlp", "luc", "shan", "stf", "tzs", "tom"]
        for name in names {
            let keys = ContactSearchKeys(name: name, phone: nil)
            for query in queries where ContactMatcher.rank(query: query, keys: keys) != nil {
                #expect(describe(query, name, nil) != nil, "\(query) in \(name)")
            }
        }
    }
}
