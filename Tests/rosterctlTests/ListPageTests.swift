import RosterProtocol
import Testing
@testable import rosterctl

/// How `contacts list` and `user list` read a slice of a long list in the pages the daemon answers.
@Suite("rosterctl list pages")
struct ListPageTests {
    /// A daemon holding `count` items that answers at most `cap` a call, recording what it was asked.
    private final class FakeList {
        let count: Int
        let cap: Int
        var asked: [(limit: Int, offset: Int)] = []

        init(count: Int, cap: Int) {
            self.count = count
            self.cap = cap
        }

        func fetch(_ limit: Int, _ offset: Int) -> JSONValue {
            asked.append((limit, offset))
            let end = min(count, offset + min(limit, cap))
            let items = offset < end ? (offset..<end).map { JSONValue.int(Int64($0)) } : []
            return ["items": .array(items), "total": .int(Int64(count))]
        }
    }

    @Test func everythingIsReadPageByPage() {
        let list = FakeList(count: 1_201, cap: 500)
        let (items, total) = ListPage().read(pageSize: 500, list.fetch)
        #expect(total == 1_201)
        #expect(items == (0..<1_201).map { JSONValue.int(Int64($0)) })
        #expect(list.asked.map(\.offset) == [0, 500, 1_000])
    }

    @Test func aLimitAndAnOffsetReadOnlyTheirSlice() {
        let list = FakeList(count: 1_201, cap: 500)
        let (items, total) = ListPage(limit: 600, offset: 10).read(pageSize: 500, list.fetch)
        #expect(total == 1_201)
        #expect(items.first == .int(10) && items.last == .int(609) && items.count == 600)
        #expect(list.asked.map(\.limit) == [500, 100])
        // A daemon answering fewer than asked (its own cap) is asked again from where it stopped.
        let capped = FakeList(count: 50, cap: 20)
        #expect(ListPage().read(pageSize: 500, capped.fetch).items.count == 50)
        #expect(capped.asked.map(\.offset) == [0, 20, 40])
        let empty = FakeList(count: 0, cap: 20)
        #expect(ListPage(offset: 5).read(pageSize: 500, empty.fetch).items.isEmpty)
        #expect(empty.asked.count == 1)
    }

    @Test func theFooterSaysHowMuchWasShown() {
        #expect(ListPage.footer(shown: 3, total: 3, "user", "users") == "3 users listed.")
        #expect(ListPage.footer(shown: 1, total: 1, "user", "users") == "1 user listed.")
        #expect(ListPage.footer(shown: 0, total: 0, "contact", "contacts") == "0 contacts listed.")
        #expect(ListPage.footer(shown: 2, total: 3, "user", "users") == "2 of 3 users listed.")
    }
}
