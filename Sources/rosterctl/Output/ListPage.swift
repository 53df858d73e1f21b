import RosterProtocol

/// Which slice of a list to print (`--limit N`, `--offset N`); no limit prints them all.
struct ListPage: Equatable {
    var limit: Int?
    var offset = 0

    /// The options as `verb` was given them: a limit above 0, an offset of 0 or more.
    static func parse(_ parsed: VerbArguments, verb: String) throws(UsageError) -> ListPage {
        var page = ListPage()
        if let text = parsed.values["--limit"] {
            guard let limit = Int(text), limit > 0 else { throw UsageError(description: "\(verb): --limit takes a number above 0, not '\(text)'") }
            page.limit = limit
        }
        if let text = parsed.values["--offset"] {
            guard let offset = Int(text), offset >= 0 else { throw UsageError(description: "\(verb): --offset takes a number, not '\(text)'") }
            page.offset = offset
        }
        return page
    }

    /// The slice's items and the list's total, read `pageSize` at a time, since the daemon caps one answer;
    /// `fetch(limit, offset)` is one call answering `{items, total}`.
    func read(pageSize: Int, _ fetch: (Int, Int) throws -> JSONValue) rethrows -> (items: [JSONValue], total: Int64) {
        var items: [JSONValue] = []
        var total: Int64 = 0
        var offset = self.offset
        while true {
            let want = min(pageSize, limit.map { $0 - items.count } ?? pageSize)
            let result = try fetch(want, offset)
            let got = result["items"]?.arrayValue ?? []
            items += got
            total = result["total"]?.int64Value ?? Int64(items.count)
            offset += got.count
            let full = limit.map { items.count >= $0 } ?? false
            // A short page is not the end while the total says there is more: a daemon may cap a page lower.
            if got.isEmpty || full || Int64(offset) >= total { break }
        }
        return (items, total)
    }

    /// The footer under a list's table: `3 users listed.`, or `2 of 3 users listed.` for part of it.
    static func footer(shown: Int, total: Int64, _ one: String, _ many: String) -> String {
        let noun = total == 1 ? one : many
        return Int64(shown) == total ? "\(total) \(noun) listed." : "\(shown) of \(total) \(noun) listed."
    }
}
