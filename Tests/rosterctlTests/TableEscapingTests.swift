import RosterProtocol
import Testing
@testable import rosterctl

/// Every table rosterctl prints shows each cell escaped, as the daemon's log lines and `--json` do: a newline in a
/// stored value prints `\n` and forges no row, ESC[8m prints `\u{1b}[8m` and hides nothing, a bidi override prints
/// `\u{202e}` and reorders nothing. Whatever the daemon sends (rows stored by an older version included).
@Suite("rosterctl tables escape every cell")
struct TableEscapingTests {
    static let hostile = "ok\n2026-12-01T19:00:00Z login root succeeded\u{1B}[8mhidden\u{202E}txt"
    static let shown = "ok\\n2026-12-01T19:00:00Z login root succeeded\\u{1b}[8mhidden\\u{202e}txt"

    /// The printed bytes of a table: its lines, each ended by a newline, as `printLine` writes them.
    private func printed(_ table: Table, legend: Bool = true) -> [UInt8] {
        Array(table.render(legend: legend).map { $0 + "\n" }.joined().utf8)
    }

    private func expectSafe(_ bytes: [UInt8], lines: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!bytes.contains(0x1B), "an ESC reached the terminal", sourceLocation: sourceLocation)
        #expect(!text.unicodeScalars.contains("\u{202E}"), "a bidi override reached the terminal", sourceLocation: sourceLocation)
        #expect(bytes.filter { $0 == 0x0A }.count == lines, "a row was forged:\n\(text)", sourceLocation: sourceLocation)
        #expect(text.contains(Self.shown), "\(text)", sourceLocation: sourceLocation)
    }

    @Test func theTableItselfEscapesAndAlignsByWhatIsShown() {
        var table = Table(columns: ["A", "B"])
        table.rows = [["x\ty", "\u{1B}[8m"], ["back\\slash", "张三"]]
        let spaces = { (count: Int) in String(repeating: " ", count: count) }
        // Widths are measured on what is shown: `back\\slash` is 11 columns.
        let rows = ["x\\ty" + spaces(8) + "\\u{1b}[8m", "back\\\\slash 张三"]
        #expect(table.render(legend: true) == ["A" + spaces(11) + "B"] + rows)
        #expect(table.render(legend: false) == rows)
    }

    @Test func userShowAndUserListEscapeTheLockReasonAndEveryOtherCell() {
        let user: JSONValue = ["username": "alice12", "email": .string("a@example.com\u{202E}"), "created_at": "2026-12-01T19:00:00Z",
                               "last_login_at": nil, "locked": true, "totp": false, "failed_logins": 0, "sessions": 1,
                               "locked_at": "2026-12-01T19:00:00Z", "locked_reason": .string(Self.hostile)]
        let bytes = printed(UserAdmin.table([user], details: true))
        expectSafe(bytes, lines: 2)
        #expect(String(decoding: bytes, as: UTF8.self).contains("a@example.com\\u{202e}"))
        #expect(!printed(UserAdmin.table([user], details: false)).contains(0x1B))
    }

    @Test func theAuditTableAndItsFollowedRowsEscapeClientAndReason() {
        let entry: JSONValue = ["id": 9, "time": "2026-12-01T19:04:05Z", "event": "locked", "username": "alice12",
                                "peer_uid": 0, "peer_pid": 1, "client": .string(Self.hostile), "outcome": "succeeded",
                                "reason": .string(Self.hostile), "suppressed": 0]
        expectSafe(printed(AuditPrinter.table([entry])), lines: 2)
        expectSafe(printed(AuditPrinter.table([entry]), legend: false), lines: 1)
        // `--follow` prints each row as it comes, without the table.
        expectSafe(Array((AuditPrinter.aligned(AuditPrinter.cells(entry)) + "\n").utf8), lines: 1)
    }

    @Test func theSessionsAndContactsTablesEscapeTheirCells() {
        let session: JSONValue = ["id": "0123456789abcdef", "created_at": "2026-12-01T19:00:00Z",
                                  "last_used_at": "2026-12-01T19:00:00Z", "client": .string(Self.hostile), "current": true]
        expectSafe(printed(SessionsVerb.table([session])), lines: 2)
        let contacts = [ContactRecord(id: 1, name: Self.hostile, phone: "1\u{202E}2", email: "b@x.org")]
        expectSafe(printed(contactsTable(contacts)), lines: 2)
    }
}
