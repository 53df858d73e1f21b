import Glibc
import RosterProtocol
import Testing

/// `contacts.import` and `contacts.export` never end without answering the call, whichever way
/// they fail: not logged in, a bad format or cursor, data with nothing but rejects, a queue budget refusing them,
/// a whole book too large for one answer, or the asking connection gone.
@Suite("Every contacts import and export is answered", .serialized)
struct ContactTransferAnswerTests {
    private func line(_ id: Int, _ method: String, _ params: JSONValue) -> String {
        String(decoding: JSONWriter.encode(["id": .int(Int64(id)), "method": .string(method), "params": params]), as: UTF8.self) + "\n"
    }

    /// Reads until every id in `ids` has one answer; an id answered twice, or one never asked, is recorded.
    private func answers(_ client: TestClient, _ ids: Range<Int>, except skipped: Range<Int> = 0..<0) throws -> [Int: JSONValue] {
        var answers: [Int: JSONValue] = [:]
        while answers.count < ids.count - skipped.count {
            let message = try client.readLine()
            guard let id = message["id"]?.int64Value.map(Int.init) else { continue }
            #expect(ids.contains(id) && !skipped.contains(id), "an answer for \(id), never asked")
            #expect(answers[id] == nil, "\(id) answered twice")
            answers[id] = message
        }
        return answers
    }

    private func reason(_ answer: JSONValue?) -> String? { answer?["error"]?["data"]?["reason"]?.stringValue }

    @Test func everyPathAnswersOnce() throws {
        // A queue budget of one job a connection, and a small answer limit, so that both refusals are reached.
        let daemon = try TestDaemon(config: "[Server]\nMaxQueuedJobsPerConnection=1\nOutputSoftLimitBytes=32K\nOutputHardLimitBytes=64K\n")
        let client = try daemon.connect()
        try client.send(line(1, "contacts.import", ["format": "csv", "data": "name\r\nAnn\r\n"])
                        + line(2, "contacts.export", ["format": "vcard"]))
        let before = try answers(client, 1..<3)
        #expect(reason(before[1]) == "unauthenticated" && reason(before[2]) == "unauthenticated")

        _ = try client.call("users.register", ["username": "xfer01", "password": "secret1"])
        _ = try client.call("auth.login", ["username": "xfer01", "password": "secret1"])
        let note = String(repeating: "n", count: 900)
        let rows = (1...60).map { "Person \($0),\(note)" }.joined(separator: "\r\n")
        // One at a time, so that the budget of one job does not refuse them (a job still counts for the instant
        // between its answer and its end on the worker, so a refusal is tried again after its hint).
        func alone(_ id: Int, _ params: JSONValue, method: String = "contacts.import") throws -> JSONValue? {
            for _ in 0..<50 {
                try client.send(line(id, method, params))
                let answer = try answers(client, id..<(id + 1))[id]
                guard reason(answer) == "busy" else { return answer }
                usleep(UInt32(answer?["error"]?["data"]?["retry_after_ms"]?.int64Value ?? 10) * 1_000)
            }
            return nil
        }
        // 60 contacts of about 900 bytes: too many for one answer of 32 KiB.
        #expect(try alone(9, ["format": "csv", "data": .string("name,note\r\n" + rows)])?["result"]?["added"] == 60)
        var batch = line(10, "contacts.import", ["format": "xml", "data": ""])
        batch += line(11, "contacts.export", ["format": "csv", "cursor": "not-a-cursor"])
        batch += line(12, "contacts.export", ["format": "csv", "cursor": "-1"])
        batch += line(15, "contacts.import", ["format": "csv", "data": .string("name,note\r\n" + rows)])
        for id in 16..<56 {
            batch += id.isMultiple(of: 2) ? line(id, "contacts.import", ["format": "csv", "data": .string("name\r\nPiped \(id)\r\n")])
                : line(id, "contacts.export", ["format": "csv", "limit": 5])
        }
        batch += line(56, "contacts.export", ["format": "csv"])
        try client.send(batch)
        var got = try answers(client, 10..<57, except: 13..<15)
        got[13] = try alone(13, ["format": "vcard", "data": "BEGIN:VCARD\r\nNOTE:no name\r\nEND:VCARD\r\n"])
        got[14] = try alone(14, ["format": "csv", "data": ""])

        #expect(reason(got[10]) == "out_of_range")
        #expect(reason(got[11]) == "out_of_range" && reason(got[12]) == "out_of_range")
        #expect(got[13]?["result"]?["added"] == 0 && got[13]?["result"]?["errors_total"] == 1)
        #expect(got[14]?["result"]?["added"] == 0, "\(String(describing: got[14]))")
        let piped = (15..<57).map { got[$0] }
        // Each is either done or refused by the budget with a hint, nothing else.
        for answer in piped where answer?["result"] == nil {
            #expect(["busy", "answer_too_large"].contains(reason(answer) ?? ""), "\(String(describing: answer))")
            #expect(reason(answer) != "busy" || (answer?["error"]?["data"]?["retry_after_ms"]?.int64Value ?? 0) > 0)
        }
        #expect(piped.contains { reason($0) == "busy" }, "the budget of one job was never reached")
        let whole = try alone(57, ["format": "csv"], method: "contacts.export")
        #expect(reason(whole) == "answer_too_large", "\(String(describing: whole))")

        // Exports queued by a connection that leaves are still ended (skipped): the daemon serves the next one.
        let leaving = try daemon.connect()
        _ = try leaving.call("auth.login", ["username": "xfer01", "password": "secret1"])
        try leaving.send((0..<20).map { line($0, "contacts.export", ["format": "vcard", "limit": 10]) }.joined())
        leaving.close()
        #expect(try alone(58, ["format": "csv", "limit": 1], method: "contacts.export")?["result"]?["next_cursor"] != .null)
        #expect(daemon.poll() == nil)
    }
}
