import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// The fast lane for `users.check_username` in the plain shape (see `PlainRequest`): no `JSONValue` tree, no
/// `Call`, and an answer assembled from bytes encoded once per verdict and locale. Its answers are byte for
/// byte those of the general path, which still serves every other shape of the same request.
final class PlainRequests<Host: DispatchHost> {
    /// Pre-encoded answer tails; a configuration change (messages name the policy's limits) empties it.
    /// A list, not a dictionary: there are a handful of verdicts per locale, and hashing a verdict hashes its
    /// raw-value strings, which cost more than the scan.
    struct Answers {
        private var results: [(verdict: FieldVerdict, locale: RosterLocale, encoded: [UInt8])] = []

        func encoded(_ verdict: FieldVerdict, _ locale: RosterLocale) -> [UInt8]? {
            results.first { $0.verdict == verdict && $0.locale == locale }?.encoded
        }

        mutating func remember(_ encoded: [UInt8], for verdict: FieldVerdict, _ locale: RosterLocale) {
            results.append((verdict, locale, encoded))
        }
    }

    /// Where a name may be known from memory (its username directory).
    private let storage: any Storage
    private let accounts: AccountProcedures
    private let stats: ServerStats
    /// The policy in force; its change empties the answers encoded under the old one.
    var policy: Policy {
        didSet { answers = Answers() }
    }
    private var answers = Answers()

    init(storage: any Storage, accounts: AccountProcedures, stats: ServerStats, policy: Policy) {
        self.storage = storage
        self.accounts = accounts
        self.stats = stats
        self.policy = policy
    }

    /// Answers the line if it is a plain `users.check_username`; false sends it down the general path. When the
    /// local rules settle it, or the storage knows the name from memory (its username directory), the answer is
    /// written straight from the read buffer, with nothing allocated; otherwise the id is copied and the request
    /// counts as in flight until the storage answers.
    func answer(_ bytes: UnsafeBufferPointer<UInt8>, from connection: Host) -> Bool {
        guard let request = PlainRequest.scan(bytes, method: "users.check_username", param: "username") else {
            return false
        }
        let username = String(decoding: UnsafeBufferPointer(rebasing: bytes[request.value]), as: UTF8.self)
        let id = UnsafeBufferPointer(rebasing: bytes[request.id])
        switch RegisterRules.username(username, policy: policy) {
        case .settled(let verdict):
            send(id: id, verdict, to: connection)
        case .check(let check):
            if case .usernameAvailable(let canonical) = check, let taken = storage.knownUsernameTaken(canonical) {
                send(id: id, check.verdict(for: taken ? .taken : .available), to: connection)
                return true
            }
            // The line's bytes are the shared read buffer's, reused by the next read: only the id is kept.
            let copiedID = Array(id)
            connection.requestStarted()
            accounts.check(check, charge: connection.queueCharge) { [self] result in
                copiedID.withUnsafeBufferPointer { send(id: $0, check.verdict(for: result), to: connection) }
                connection.requestFinished()
            }
        }
        return true
    }

    private func send(id: UnsafeBufferPointer<UInt8>, _ verdict: FieldVerdict, to connection: Host) {
        let tail = tail(verdict, locale: connection.session.locale)
        stats.requestsServed += 1
        connection.sendLine { line in
            line.append(literal: #"{"jsonrpc":"2.0","id":"#)
            line.append(contentsOf: id)
            line.append(contentsOf: tail)
        }
    }

    /// What follows the id in `{"jsonrpc":"2.0","id":…,"result":…}` and a newline, as `RPCMessage.result`
    /// writes it.
    private func tail(_ verdict: FieldVerdict, locale: RosterLocale) -> [UInt8] {
        if let encoded = answers.encoded(verdict, locale) { return encoded }
        let encoded = Array(#","result":"#.utf8)
            + JSONWriter.encode(UsernameCheckAnswer.result(verdict, locale: locale, policy: policy)) + Array("}\n".utf8)
        answers.remember(encoded, for: verdict, locale)
        return encoded
    }
}

private extension Array where Element == UInt8 {
    mutating func append(literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
