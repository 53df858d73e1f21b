import Testing
import RosterTestSupport
@testable import RosterCore

@Suite("Contacts search keys and matching")
struct ContactsSearchTests {
    @Test func keysInEveryScript() {
        #expect(ContactSearchKeys(name: "张三", phone: nil) == ContactSearchKeys(
            folded: "张三", initials: "张", pinyin: "zhangsan", pinyinInitials: "zs", hangulInitials: "", phoneDigits: ""))
        #expect(ContactSearchKeys(name: "김수현", phone: "010-1234-5678") == ContactSearchKeys(
            folded: "김수현", initials: "김", pinyin: "", pinyinInitials: "", hangulInitials: "ㄱㅅㅎ",
            phoneDigits: "01012345678"))
        #expect(ContactSearchKeys(name: "Nguyễn Văn Ánh", phone: nil) == ContactSearchKeys(
            folded: "nguyen van anh", initials: "nva", pinyin: "", pinyinInitials: "", hangulInitials: "",
            phoneDigits: ""))
        #expect(ContactSearchKeys(name: "Đặng Thu Thảo", phone: nil).folded == "dang thu thao")
        #expect(ContactSearchKeys(name: "Alice Smith", phone: "+1 (555) 010-9999") == ContactSearchKeys(
            folded: "alice smith", initials: "as", pinyin: "", pinyinInitials: "", hangulInitials: "",
            phoneDigits: "15550109999"))
        #expect(ContactSearchKeys(name: "单田芳", phone: nil).pinyin == "shantianfang")
        #expect(ContactSearchKeys(name: "Jean-Luc  Picard", phone: nil).initials == "jlp")
        #expect(ContactSearchKeys(name: "Bob", phone: "０１０ ２２").phoneDigits == "01022")
    }

    @Test func decomposedHangulStillHasInitials() {
        // NFD 김 = U+1100 U+1175 U+11B7: some keyboards send syllables this way.
        let decomposed = "\u{1100}\u{1175}\u{11B7}\u{1109}\u{116E}"
        #expect(ContactSearchKeys(name: decomposed, phone: nil).hangulInitials == "ㄱㅅ")
        #expect(ContactSearchKeys(name: decomposed, phone: nil).folded == "김수")
    }

    @Test func queryFolding() {
        #expect(ContactSearchKeys.foldQuery("Nguyễn") == "nguyen")
        #expect(ContactSearchKeys.foldQuery("ＡＬＩＣＥ") == "alice")
        #expect(ContactSearchKeys.foldQuery("  Alice \t Smith ") == "alice smith")
        #expect(ContactSearchKeys.foldQuery("ĐẶNG") == "dang")
        // NFKC alone would make these conjoining leads U+1100 U+1109, which no stored key contains.
        let jamo = ContactSearchKeys.foldQuery("ㄱㅅ")
        #expect(jamo.unicodeScalars.map(\.value) == [0x3131, 0x3145])
        #expect(ContactSearchKeys.foldQuery("\u{1100}\u{1109}") == jamo)
        #expect(ContactSearchKeys.foldQuery("ㄲㅎ") == "ㄲㅎ")
    }

    /// A query may be as long as a request line; folding it appends scalar by scalar (issue 12: appending a
    /// mapped letter as a sequence copied the whole result each time, quadratic in the query's length).
    @Test func aLongQueryFoldsWhole() {
        let query = String(repeating: "Đặng ㄱ ", count: 20_000)
        #expect(ContactSearchKeys.foldQuery(query) == Array(repeating: "dang \u{3131}", count: 20_000).joined(separator: " "))
    }

    private static let names: [(Int64, String, String?)] = [
        (1, "张三", nil), (2, "王五", nil), (3, "김수현", nil), (4, "Nguyễn Văn Ánh", nil), (5, "Đặng Thu Thảo", nil),
        (6, "Alice Smith", nil), (7, "Bob Jones", "+1 (555) 010-9999"),
    ]

    private static func index() -> ContactIndex {
        ContactIndex(names.map { (id: $0.0, keys: ContactSearchKeys(name: $0.1, phone: $0.2)) })
    }

    @Test(arguments: [
        ("zs", [1]), ("zhang", [1]), ("张", [1]), ("zhang san", [1]), ("ZhangSan", [1]),
        ("ww", [2]),
        ("ㄱㅅ", [3]), ("김수", [3]), ("ㄱㅅㅎ", [3]),
        ("nguyen", [4]), ("anh", [4]), ("nva", [4]), ("Nguyễn", [4]), ("NGUYỄN VĂN", [4]),
        ("dang", [5]), ("dtt", [5]), ("Đặng", [5]),
        ("as", [6]), ("ali", [6]), ("SMITH", [6]), ("smi", [6]), ("ALICE", [6]), ("ＡＬＩＣＥ", [6]), ("ａｌｉｃｅ", [6]),
        ("555010", [7]), ("010-99", [7]), ("(555) 010", [7]), ("１５５５", [7]),
        ("xyz", []), ("ㄴ", []), ("5550199", []),
    ] as [(String, [Int64])])
    func searchCase(query: String, expected: [Int64]) {
        let result = Self.index().search(query: query, limit: 50, offset: 0)
        #expect(result.ids == expected)
        #expect(result.total == expected.count)
    }

    @Test func ranksOfOneContact() {
        let zhang = ContactSearchKeys(name: "张三", phone: nil)
        #expect(ContactMatcher.rank(query: "张三", keys: zhang) == ContactMatcher.exact)
        #expect(ContactMatcher.rank(query: "zhangsan", keys: zhang) == ContactMatcher.exact)
        #expect(ContactMatcher.rank(query: "zhang", keys: zhang) == ContactMatcher.prefix)
        #expect(ContactMatcher.rank(query: "张", keys: zhang) == ContactMatcher.prefix)
        #expect(ContactMatcher.rank(query: "zs", keys: zhang) == ContactMatcher.initials)
        #expect(ContactMatcher.rank(query: "三", keys: zhang) == ContactMatcher.contains)
        #expect(ContactMatcher.rank(query: "san", keys: zhang) == nil)
        let alice = ContactSearchKeys(name: "Alice Smith", phone: "+1 (555) 010-9999")
        #expect(ContactMatcher.rank(query: "alice smith", keys: alice) == ContactMatcher.exact)
        #expect(ContactMatcher.rank(query: "smith", keys: alice) == ContactMatcher.prefix)
        #expect(ContactMatcher.rank(query: "as", keys: alice) == ContactMatcher.initials)
        #expect(ContactMatcher.rank(query: "mit", keys: alice) == ContactMatcher.contains)
        #expect(ContactMatcher.rank(query: "010-99", keys: alice) == ContactMatcher.contains)
        #expect(ContactMatcher.rank(query: "", keys: alice) == ContactMatcher.exact)
        #expect(ContactMatcher.rank(query: "a1", keys: alice) == nil)
        let kim = ContactSearchKeys(name: "김수현", phone: nil)
        #expect(ContactMatcher.rank(query: "ㄱㅅ", keys: kim) == ContactMatcher.initials)
        #expect(ContactMatcher.rank(query: "김수", keys: kim) == ContactMatcher.prefix)
        // A later occurrence at a word start beats an earlier one inside a word.
        let joanne = ContactSearchKeys(name: "Joanne Ann", phone: nil)
        #expect(ContactMatcher.rank(query: "ann", keys: joanne) == ContactMatcher.prefix)
    }

    @Test func rankingOrder() {
        let contacts: [(Int64, String)] = [
            (1, "Joanne"), (2, "Amy Nora Nye"), (3, "Lee Ann"), (4, "Annabel"), (9, "Anna Lee"), (5, "Anna Lee"),
            (6, "Ann"), (7, "Bob"), (8, "ann"),
        ]
        let index = ContactIndex(contacts.map { (id: $0.0, keys: ContactSearchKeys(name: $0.1, phone: nil)) })
        // exact (6, 8 by id) · prefix by folded name ("anna lee" < "annabel" < "lee ann"), ties by id ·
        // initials · contains.
        #expect(index.search(query: "ANN", limit: 50, offset: 0) == ([6, 8, 5, 9, 4, 3, 2, 1], 8))
        #expect(index.search(query: "ann", limit: 3, offset: 2) == ([5, 9, 4], 8))
        #expect(index.search(query: "ann", limit: 50, offset: 7) == ([1], 8))
        #expect(index.search(query: "ann", limit: 50, offset: 8) == ([], 8))
        #expect(index.search(query: "ann", limit: 0, offset: 0) == ([], 8))
        #expect(index.list(limit: 50, offset: 0) == ([2, 6, 8, 5, 9, 4, 7, 1, 3], 9))
        #expect(index.search(query: "  ", limit: 2, offset: 1) == ([6, 8], 9))
    }

    @Test func phoneDigitsRankAsContains() {
        let index = ContactIndex([
            (id: 1, keys: ContactSearchKeys(name: "Zed", phone: "555 0100")),
            (id: 2, keys: ContactSearchKeys(name: "Room 555", phone: nil)),
            (id: 3, keys: ContactSearchKeys(name: "555", phone: nil)),
            (id: 4, keys: ContactSearchKeys(name: "Amy", phone: "(0) 5550")),
        ])
        #expect(index.search(query: "555", limit: 10, offset: 0) == ([3, 2, 4, 1], 4))
    }

    @Test func updatesAndRemovals() {
        var index = ContactIndex()
        index.upsert(id: 1, keys: ContactSearchKeys(name: "Carol", phone: nil))
        index.upsert(id: 2, keys: ContactSearchKeys(name: "Alice", phone: nil))
        index.upsert(id: 3, keys: ContactSearchKeys(name: "Bob", phone: nil))
        #expect(index.list(limit: 10, offset: 0) == ([2, 3, 1], 3))
        index.upsert(id: 2, keys: ContactSearchKeys(name: "Dave", phone: nil))
        #expect(index.list(limit: 10, offset: 0) == ([3, 1, 2], 3))
        #expect(index.search(query: "alice", limit: 10, offset: 0) == ([], 0))
        index.remove(id: 3)
        index.remove(id: 42)
        #expect(index.list(limit: 10, offset: 0) == ([1, 2], 2))
        #expect(index.count == 2)
        #expect(index.contains(id: 1) && !index.contains(id: 3))
    }

    @Test func compactionKeepsEverything() {
        var index = ContactIndex()
        for id in Int64(1)...10 { index.upsert(id: id, keys: ContactSearchKeys(name: "Name \(id)", phone: nil)) }
        for round in 0..<300 {
            for id in Int64(1)...10 {
                index.upsert(id: id, keys: ContactSearchKeys(name: "Name \(id) r\(round % 7)", phone: "\(id)"))
            }
        }
        index.remove(id: 4)
        #expect(index.list(limit: 20, offset: 0) == ([1, 10, 2, 3, 5, 6, 7, 8, 9], 9))
        #expect(index.search(query: "name 1", limit: 20, offset: 0) == ([1, 10], 2))
        #expect(index.search(query: "r5", limit: 20, offset: 0).total == 9)
    }

    @Test func bulkAndIncrementalAgree() {
        let entries = (0..<200).map { (id: Int64(199 - $0), keys: ContactSearchKeys(name: "P\($0 % 13) \($0)",
                                                                                  phone: nil)) }
        var incremental = ContactIndex()
        for entry in entries { incremental.upsert(id: entry.id, keys: entry.keys) }
        let bulk = ContactIndex(entries)
        #expect(bulk.list(limit: 500, offset: 0) == incremental.list(limit: 500, offset: 0))
        #expect(bulk.search(query: "p1", limit: 500, offset: 0) == incremental.search(query: "p1", limit: 500, offset: 0))
    }

    /// A batch merged into a filled index (an import, a replay after a load) orders exactly as contacts added one at
    /// a time: new names among old ones, replaced ids, an id twice in one batch, ties on the name broken by id.
    @Test(arguments: 0..<8)
    func aBatchMergedIntoAFilledIndexAgreesWithOneAtATime(seed: Int) {
        var random = SplitMix64(seed: 0xB47C_0000 &+ UInt64(seed))
        func keys(_ number: UInt64) -> ContactSearchKeys {
            ContactSearchKeys(name: "N\(number % 29) \(number % 5)", phone: nil)
        }
        let first = (1...300).map { (id: Int64($0), keys: keys(random.next())) }
        var merged = ContactIndex(first)
        var incremental = ContactIndex()
        for entry in first { incremental.upsert(id: entry.id, keys: entry.keys) }
        for _ in 0..<3 {
            let batch = (0..<(65 + Int(random.next() % 200))).map { _ in
                (id: Int64(1 + random.next() % 600), keys: keys(random.next()))
            }
            merged.upsert(contentsOf: batch)
            for entry in batch { incremental.upsert(id: entry.id, keys: entry.keys) }
            #expect(merged.list(limit: 1_000, offset: 0) == incremental.list(limit: 1_000, offset: 0))
            #expect(merged.search(query: "n1", limit: 1_000, offset: 0)
                    == incremental.search(query: "n1", limit: 1_000, offset: 0))
        }
    }
}
