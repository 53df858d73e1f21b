import Foundation
import RosterProtocol

/// Many connections sending at once, with a fault (a killed daemon, a stopped database) injected mid-storm: what
/// was acknowledged must survive it, and what was not must still be answered or cut off, never left hanging.
enum RequestStorm {
    /// What the storm's requests got.
    struct Outcome {
        /// Keys of the requests answered with a result.
        var acknowledged: [String] = []
        /// `data.reason` of each error answer.
        var refusals: [String] = []
        /// Requests with no answer when their connection ended or went quiet for the client's timeout.
        var unanswered = 0
    }

    /// Sends `perClient` requests (`request(client, index)`, id `index`) pipelined on each of `clients` connections,
    /// runs `fault` `faultAfterMs` after the first acknowledgement, and reads until every request is answered or
    /// its connection ends.
    static func run(_ daemon: TestDaemon, clients: Int, perClient: Int, faultAfterMs: Int,
                    prepare: @escaping @Sendable (TestClient) throws -> Void = { _ in },
                    request: @escaping @Sendable (Int, Int) -> (key: String, line: String),
                    fault: () -> Void) throws -> Outcome {
        let outcome = Locked(Outcome())
        let group = DispatchGroup()
        for client in 0..<clients {
            let connection = try daemon.connect()
            try prepare(connection)
            let box = Transfer(connection)
            group.enter()
            Thread {
                defer { group.leave() }
                var keys: [Int: String] = [:]
                var batch = ""
                for index in 0..<perClient {
                    let (key, line) = request(client, index)
                    keys[index] = key
                    batch += line
                }
                guard (try? box.value.send(batch)) != nil else {
                    outcome.mutate { $0.unanswered += perClient }
                    return
                }
                while !keys.isEmpty, let line = try? box.value.readRawLine() {
                    guard let answer = try? JSONParser.parse(Array(line.utf8)), let id = answer["id"]?.int64Value,
                          let key = keys.removeValue(forKey: Int(id)) else { continue }
                    if answer["result"] != nil {
                        outcome.mutate { $0.acknowledged.append(key) }
                    } else {
                        let reason = answer["error"]?["data"]?["reason"]?.stringValue ?? "\(answer)"
                        outcome.mutate { $0.refusals.append(reason) }
                    }
                }
                let left = keys.count
                outcome.mutate { $0.unanswered += left }
            }.start()
        }
        for _ in 0..<6_000 where outcome.value.acknowledged.isEmpty { usleep(5_000) }
        usleep(useconds_t(faultAfterMs * 1_000))
        fault()
        group.wait()
        return outcome.value
    }
}
