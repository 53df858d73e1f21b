import RosterCore
import RosterProtocol
import Testing
@testable import RosterRuntime
@testable import RosterServer

@Suite("Export pages")
struct ContactExportTests {
    private let contacts = (1...30).map { index in
        Contact(id: Int64(index * 3), draft: ContactDraft(name: "Person \(index), \"quoted\"", phone: "+1 555 \(index)",
                                                          email: nil, note: "line one\nline two"),
                createdAt: 0, updatedAt: 0)
    }

    /// Writes into `writer` the way a storage backend does: in id order after `after`, until it refuses one.
    private func fill(_ writer: inout ContactExportWriter, after: Int64?) -> (more: Bool, line: Result<[UInt8], RosterError>) {
        var more = false
        for contact in contacts where contact.id > (after ?? 0) {
            guard writer.add(contact) else {
                more = true
                break
            }
        }
        return (more, writer.finish(more: more))
    }

    /// Writes pages the way the daemon's storage does, each starting after the previous page's cursor.
    private func pages(_ format: ContactFormat, byteLimit: Int, contactLimit: Int) throws -> [JSONValue] {
        var pages: [JSONValue] = []
        var after: Int64?
        repeat {
            var writer = ContactExportWriter(id: .int(7), format: format, startsFile: after == nil, byteLimit: byteLimit,
                                             contactLimit: contactLimit)
            let (more, result) = fill(&writer, after: after)
            let line = try result.get()
            #expect(writer.count <= contactLimit)
            #expect(line.last == 0x0A)
            #expect(line.count <= byteLimit || writer.count == 1, "a page passed its limit with more than one contact")
            let answer = try JSONParser.parse(Array(line.dropLast()))
            #expect(answer["id"] == 7)
            pages.append(answer["result"] ?? .null)
            after = (answer["result"]?["next_cursor"]?.stringValue).flatMap(ContactExportCursor.decode)
            #expect(more == (after != nil))
        } while after != nil
        return pages
    }

    private func joined(_ pages: [JSONValue]) -> String { pages.map { $0["data"]?.stringValue ?? "" }.joined() }

    @Test(arguments: [ContactFormat.vcard, .csv])
    func pagesPutTogetherAreTheWholeFile(format: ContactFormat) throws {
        let whole = format == .csv ? ContactCSV.serialize(contacts) : VCard.serialize(contacts)
        for (bytes, count) in [(1 << 20, 10_000), (1 << 20, 7), (1_500, 10_000), (1, 10_000)] {
            let result = try pages(format, byteLimit: bytes, contactLimit: count)
            #expect(joined(result) == whole, "pages of \(bytes) bytes, \(count) contacts")
            #expect(result.count > 1 || (bytes == 1 << 20 && count == 10_000))
            // The file's header is in the first page only.
            let laterPages = result.dropFirst().map { $0["data"]?.stringValue ?? "" }
            #expect(laterPages.allSatisfy { !$0.hasPrefix("name,") })
            #expect(format == .vcard || joined(result).components(separatedBy: "name,phone,email,note").count == 2)
            #expect(format == .csv || ContactFormat.vcard.parse(joined(result)).contacts.map(\.draft) == contacts.map(\.draft))
        }
    }

    @Test func theLastPageHasANullCursorAndAnEmptyBookIsOnePage() throws {
        var writer = ContactExportWriter(id: "x", format: .csv, startsFile: true, byteLimit: 1 << 20, contactLimit: 1_000)
        let line = try writer.finish(more: false).get()
        #expect(String(decoding: line, as: UTF8.self)
                == #"{"jsonrpc":"2.0","id":"x","result":{"data":"name,phone,email,note\r\n","next_cursor":null}}"# + "\n")
    }

    /// Without a contact limit the whole book was asked for: it comes in one line with a null cursor, or, when it
    /// does not fit, as `answer_too_large` naming the length it would have passed, never as a part of it.
    @Test func aWholeBookIsOneAnswerOrAnswerTooLarge() throws {
        let everything = ContactCSV.serialize(contacts)
        var roomy = ContactExportWriter(id: 1, format: .csv, startsFile: true, byteLimit: 1 << 20, contactLimit: nil)
        let whole = fill(&roomy, after: nil)
        #expect(!whole.more)
        let answer = try JSONParser.parse(Array(try whole.line.get().dropLast()))
        #expect(answer["result"]?["data"]?.stringValue == everything)
        #expect(answer["result"]?["next_cursor"] == .null)

        for limit in [1, 500, everything.utf8.count] {
            var tight = ContactExportWriter(id: 1, format: .csv, startsFile: true, byteLimit: limit, contactLimit: nil)
            let part = fill(&tight, after: nil)
            #expect(part.more)
            guard case .failure(.answerTooLarge(let size, let reported)) = part.line else {
                Issue.record("a book of \(everything.utf8.count) bytes under a limit of \(limit): \(part.line)")
                continue
            }
            #expect(reported == limit)
            #expect(size > limit)
        }
    }

    /// A page stops at its contact limit whatever room is left, and says there is more.
    @Test func aPageHoldsAtMostItsContactLimit() throws {
        for contactLimit in [1, 7, 29, 30, 31] {
            var writer = ContactExportWriter(id: 1, format: .vcard, startsFile: true, byteLimit: 1 << 20,
                                             contactLimit: contactLimit)
            let page = fill(&writer, after: nil)
            #expect(writer.count == min(contactLimit, contacts.count))
            #expect(page.more == (contactLimit < contacts.count))
            let answer = try JSONParser.parse(Array(try page.line.get().dropLast()))
            let cursor = answer["result"]?["next_cursor"]
            #expect(cursor == (page.more ? .string(ContactExportCursor.encode(after: contacts[contactLimit - 1].id)) : .null))
        }
    }

    @Test func cursorsAreOnlyThoseTheDaemonGivesOut() {
        #expect(ContactExportCursor.decode(ContactExportCursor.encode(after: 42)) == 42)
        for bad in ["", "-1", "4.2", "abc", "1 ", "99999999999999999999", "١٢"] { #expect(ContactExportCursor.decode(bad) == nil) }
    }
}

/// What one `contacts.export` call asks for, read from its params: a request, or the error that answers the call.
@Suite("Export requests")
struct ContactExportRequestTests {
    private let spec: [FieldSpec] = [FieldSpec("format", .string), .optional("limit", .integer(1...10_000)),
                                     .optional("cursor", .string)]

    private func request(_ params: [(String, JSONValue)]) throws -> Result<ContactExportRequest, RosterError> {
        let validated = try Params(validating: params, against: spec)
        return Result { () throws(RosterError) in try ContactExportRequest(validated, maxAnswerBytes: 16 << 20) }
    }

    @Test func theWholeBookOrAPage() throws {
        let whole = try request([("format", "vcard")]).get()
        #expect(whole.after == nil && whole.contactLimit == nil && whole.byteLimit == 16 << 20)
        let first = try request([("format", "csv"), ("limit", 7)]).get()
        #expect(first.after == nil && first.contactLimit == 7 && first.byteLimit == 1 << 20)
        let next = try request([("format", "csv"), ("cursor", "42")]).get()
        #expect(next.after == 42 && next.contactLimit == 1_000 && next.byteLimit == 1 << 20)
        #expect(!next.writer(id: 1).line.isEmpty)
    }

    /// A format or cursor the daemon does not know is an error for the call, never silence.
    @Test func whatCannotBeReadIsAnError() throws {
        #expect(try request([("format", "xml")]) == .failure(.invalidParams(param: "format", problem: .outOfRange)))
        for cursor in ["", "x", "-1", "99999999999999999999"] {
            #expect(try request([("format", "csv"), ("cursor", .string(cursor))])
                    == .failure(.invalidParams(param: "cursor", problem: .outOfRange)))
        }
    }
}
