import Glibc
import RosterCore

/// `[Server] GatewayUsers=` made into uids, at the daemon's edge: names are looked up in the user database
/// (getpwnam_r, so NSS applies) when the daemon starts and at each reload; a name nobody holds trusts no one.
enum GatewayUIDs {
    /// The uids `users` name, and the names that no user holds (for the log).
    static func resolve(_ users: [GatewayUser]) -> (uids: Set<UInt32>, unknown: [String]) {
        var uids: Set<UInt32> = []
        var unknown: [String] = []
        for user in users {
            switch user {
            case .uid(let uid): uids.insert(uid)
            case .name(let name):
                if let uid = lookUp(name) { uids.insert(uid) } else { unknown.append(name) }
            }
        }
        return (uids, unknown)
    }

    /// The log line naming whom `session.hello` `remote` is taken from: root, the daemon's user and the gateways.
    static func summary(trusted uids: Set<UInt32>, daemonUID: UInt32, unknown: [String]) -> String {
        let all = (uids.union([0, daemonUID])).sorted().map(String.init).joined(separator: " ")
        let missing = unknown.isEmpty ? "" : "; no such user: " + unknown.joined(separator: " ")
        return "rosterd: session.hello remote is taken from uids \(all)\(missing)"
    }

    private static func lookUp(_ name: String) -> UInt32? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 1024)
        while true {
            let status = buffer.withUnsafeMutableBufferPointer { bytes -> Int32 in
                guard let base = bytes.baseAddress else { return ERANGE }
                return getpwnam_r(name, &entry, base, bytes.count, &result)
            }
            // A long entry (many groups, a long gecos) needs a larger buffer; past 1 MiB it is no user.
            if status == ERANGE, buffer.count < 1 << 20 {
                buffer = [CChar](repeating: 0, count: buffer.count * 4)
                continue
            }
            guard status == 0, result != nil else { return nil }
            return entry.pw_uid
        }
    }
}
