import Testing
@testable import RosterCore

/// 100,000 contacts for one user, as issue 4's performance target has it. Correctness only: timing lives
/// in the release-mode benchmark, never in a debug test.
@Suite("Contacts index at 100,000")
struct ContactsScaleTests {
    private static let given = ["Alice", "Bob", "Carol", "David", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy",
                                "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor",
                                "Walter", "Anh", "Thảo", "Minh"]
    private static let family = ["Smith", "Jones", "Nguyễn", "Trần", "Đặng", "Lee", "Park", "Brown", "Wilson",
                                 "Lê", "Phạm", "Ann"]
    private static let cjk = ["张三", "王五", "李四", "赵六", "김수현", "박지민", "이민호", "欧阳娜娜"]

    /// Keys for a few hundred distinct names, computed once; the 100,000 contacts reuse them with their
    /// own phone digits, so the test does not spend its time in ICU.
    private static func entries() -> [(id: Int64, keys: ContactSearchKeys)] {
        var distinct: [ContactSearchKeys] = []
        for first in given { for last in family { distinct.append(ContactSearchKeys(name: "\(first) \(last)", phone: nil)) } }
        for name in cjk { distinct.append(ContactSearchKeys(name: name, phone: nil)) }
        return (0..<100_000).map { number in
            var keys = distinct[(number &* 7919) % distinct.count]
            keys.phoneDigits = String(1_000_000_000 + (number &* 104_729) % 900_000_000)
            return (id: Int64(100_000 - number), keys: keys)
        }
    }

    /// The specification, written the slow way: rank each contact, sort by (rank, folded name, id).
    private static func expected(_ entries: [(id: Int64, keys: ContactSearchKeys)], _ query: String,
                                 limit: Int, offset: Int) -> (ids: [Int64], total: Int) {
        let matches = entries.compactMap { entry in
            ContactMatcher.rank(query: query, keys: entry.keys).map { (rank: $0, name: Array(entry.keys.folded.utf8),
                                                                       id: entry.id) }
        }.sorted { a, b in
            if a.rank != b.rank { return a.rank < b.rank }
            if a.name != b.name { return a.name.lexicographicallyPrecedes(b.name) }
            return a.id < b.id
        }
        let page = matches.dropFirst(offset).prefix(limit).map(\.id)
        return (Array(page), matches.count)
    }

    @Test func searchesAgreeWithTheSpecification() {
        let entries = Self.entries()
        let index = ContactIndex(entries)
        #expect(index.count == 100_000)

        let list = index.list(limit: 3, offset: 0)
        #expect(list.total == 100_000)
        #expect(list.ids == Self.expected(entries, "", limit: 3, offset: 0).ids)

        for (query, limit, offset) in [("ann", 50, 0), ("zs", 20, 100), ("ㄱㅅ", 10, 0), ("nguyen", 50, 4_000),
                                       ("1234", 50, 0)] {
            let result = index.search(query: query, limit: limit, offset: offset)
            #expect(result == Self.expected(entries, query, limit: limit, offset: offset), "query \(query)")
        }
        #expect(index.search(query: "no such name", limit: 50, offset: 0) == ([], 0))
    }
}
