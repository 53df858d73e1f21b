import Foundation
import Glibc
import RosterProtocol
import Testing

/// Fair queues: one user pipelining imports once made every other user's `auth.login` answer `busy` for 21 s and
/// a `session.resume` wait 20 s. Queued work is budgeted per connection and per user, and users take turns.
/// Nothing here is timed: what is pinned is who gets `busy`, and how many of the flood's answers come before
/// another user's, which on the old single FIFO was the whole queue.
@Suite("Fair queues against the real rosterd", .serialized)
struct QueueFairnessTests {
    /// What the flooding thread has seen so far.
    struct FloodCount {
        var succeeded = 0
        var busy = 0
        var busyWithoutRetryHint = 0
        var other: [String] = []
    }

    /// Keeps `depth` one-row imports in flight on `client` (a new one for each that succeeds) until `stop`.
    private static func flood(_ client: TestClient, depth: Int, count: Locked<FloodCount>, stop: Locked<Bool>,
                              done: DispatchSemaphore) {
        defer { done.signal() }
        var next = 0
        func request() -> String {
            next += 1
            let data = "name\r\nFlood \(next)\r\n"
            return String(decoding: JSONWriter.encode(["id": .int(next), "method": "contacts.import",
                                                       "params": ["format": "csv", "data": .string(data)]]), as: UTF8.self) + "\n"
        }
        var outstanding = depth
        guard (try? client.send((0..<depth).map { _ in request() }.joined())) != nil else { return }
        while outstanding > 0, let line = try? client.readRawLine(), let answer = try? JSONParser.parse(Array(line.utf8)) {
            guard answer["id"] != nil else { continue }
            outstanding -= 1
            if answer["result"]?["added"] == .int(1) {
                count.mutate { $0.succeeded += 1 }
                if !stop.value, (try? client.send(request())) != nil { outstanding += 1 }
            } else if answer["error"]?["data"]?["reason"] == "busy" {
                let hint = answer["error"]?["data"]?["retry_after_ms"]?.int64Value ?? 0
                count.mutate { $0.busy += 1; if hint <= 0 { $0.busyWithoutRetryHint += 1 } }
            } else {
                count.mutate { $0.other.append(line) }
            }
        }
    }

    @Test func oneUsersFloodOfImportsLeavesEveryoneElseServed() throws {
        // The default budgets: 32 jobs per connection, 64 per user.
        let daemon = try TestDaemon()
        let setup = try daemon.connect()
        for name in ["flood1", "calm12"] {
            #expect(try setup.call("users.register", ["username": .string(name), "password": "secret1"])["result"] != nil)
        }
        let token = try setup.call("auth.login", ["username": "calm12", "password": "secret1"])["result"]?["token"]
        let flooder = try daemon.connect()
        #expect(try flooder.call("auth.login", ["username": "flood1", "password": "secret1"])["result"] != nil)

        let count = Locked(FloodCount())
        let stop = Locked(false)
        let done = DispatchSemaphore(value: 0)
        let box = Transfer(flooder)
        Thread { Self.flood(box.value, depth: 300, count: count, stop: stop, done: done) }.start()
        for _ in 0..<3_000 where count.value.succeeded < 20 { usleep(10_000) }
        #expect(count.value.succeeded >= 20, "the flood never got going: \(count.value)")

        // A log-in of another user is served, not refused: it does not queue behind the flood at all.
        let victim = try daemon.connect()
        let login = try victim.call("auth.login", ["username": "calm12", "password": "secret1"])
        #expect(login["result"]?["username"] == "calm12", "\(login)")

        // A resume and another user's write wait for a few of the flood's jobs at most, never for its queue.
        let resumer = try daemon.connect()
        let beforeResume = count.value.succeeded
        let resumed = try resumer.call("session.resume", ["token": token ?? .null])
        let duringResume = count.value.succeeded - beforeResume
        #expect(resumed["result"]?["username"] == "calm12", "\(resumed)")
        let beforeAdd = count.value.succeeded
        let added = try victim.call("contacts.add", ["name": "Calm Contact"])
        let duringAdd = count.value.succeeded - beforeAdd
        #expect(added["result"]?["contact"] != nil, "\(added)")
        let logout = try resumer.call("session.logout")
        #expect(logout["result"] != nil, "\(logout)")
        #expect(duringResume < 100, "session.resume waited for \(duringResume) of the flood's imports")
        #expect(duringAdd < 100, "contacts.add waited for \(duringAdd) of the flood's imports")

        stop.mutate { $0 = true }
        #expect(done.wait(timeout: .now() + 120) == .success)
        let final = count.value
        // The flood itself hit its budget at once, with a hint of when to come back.
        #expect(final.busy > 0, "the flood was never refused: \(final.succeeded) imports queued")
        #expect(final.busyWithoutRetryHint == 0)
        #expect(final.other.isEmpty, "\(final.other.prefix(3))")
        let stats = try setup.call("admin.stats")["result"]
        #expect((stats?["queues"]?["storage"]?["refused"]?.int64Value ?? 0) >= Int64(final.busy))
    }
}
