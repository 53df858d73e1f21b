import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// The answer line of one `contacts.export` page, `{"data":"…","next_cursor":…}`, written contact by contact off
/// the loop (the storage's `ContactExportSink`), so the loop never encodes an address book (a 45 MB export
/// was once one string encoded on the loop, then dropped because it passed the connection's output limit).
///
/// Rules: contacts go in id order; the first page of a CSV export starts with the header, later pages do not, so
/// the pages put together are one file. A page holds at most `contactLimit` contacts, and at least one; it stops
/// before the one that would take its line past `byteLimit`. The cursor of the next page is the id of the last
/// contact written: ids only grow, so contacts added or removed while a client pages through are never skipped
/// twice or repeated. Without a `contactLimit` the whole book was asked for: when it does not fit in one line,
/// the answer is `answer_too_large`, so a client that knows nothing of pages never takes a part for the whole.
struct ContactExportWriter: ContactExportSink {
    let format: ContactFormat
    let byteLimit: Int
    /// At most this many contacts; nil asks for every one, in one answer.
    let contactLimit: Int?
    private(set) var line: [UInt8]
    private(set) var count = 0
    private(set) var lastID: Int64?
    /// The length the line would have had with the contact `add` last refused: a whole book at least this big
    /// does not fit.
    private(set) var refusedLength: Int?
    private var piece: [UInt8] = []

    /// The closing `","next_cursor":"…"}` and `}\n` of the line, at most this long (an Int64 has 19 digits).
    private static let closingReserve = 48

    /// `id` is the request's, written into the line here; `startsFile` for the first page (no cursor).
    init(id: JSONValue, format: ContactFormat, startsFile: Bool, byteLimit: Int, contactLimit: Int?) {
        self.format = format
        self.byteLimit = byteLimit
        self.contactLimit = contactLimit
        line = RPCMessage.openResultLine(id: id, reservingCapacity: min(byteLimit, 1 << 20) + Self.closingReserve)
        line.append(contentsOf: #"{"data":""#.utf8)
        if startsFile, case .csv = format { JSONWriter.writeEscaped(ContactCSV.headerLine, into: &line) }
    }

    /// Adds `contact`; false, leaving the page as it was, when the page is full or it would pass the byte limit.
    mutating func add(_ contact: Contact) -> Bool {
        if let contactLimit, count >= contactLimit { return false }
        piece.removeAll(keepingCapacity: true)
        JSONWriter.writeEscaped(format.serialize(contact), into: &piece)
        let length = line.count + piece.count + Self.closingReserve
        if count > 0 && length > byteLimit {
            refusedLength = length
            return false
        }
        line.append(contentsOf: piece)
        count += 1
        lastID = contact.id
        return true
    }

    /// The finished line; `more` says whether contacts remain after this page.
    mutating func finish(more: Bool) -> Result<[UInt8], RosterError> {
        if more && contactLimit == nil {
            return .failure(.answerTooLarge(size: refusedLength ?? byteLimit + 1, limit: byteLimit))
        }
        line.append(contentsOf: #"","next_cursor":"#.utf8)
        if more, let lastID {
            JSONWriter.writeString(ContactExportCursor.encode(after: lastID), into: &line)
        } else {
            line.append(contentsOf: "null".utf8)
        }
        line.append(UInt8(ascii: "}"))
        RPCMessage.closeResultLine(&line)
        return .success(line)
    }
}

/// `next_cursor`: opaque to clients, the id of the last contact a page held.
enum ContactExportCursor {
    static func encode(after id: Int64) -> String { String(id) }

    /// The id after which the page starts, or nil for a cursor this daemon never gave out.
    static func decode(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let id = Int64(text) else { return nil }
        return id
    }
}
