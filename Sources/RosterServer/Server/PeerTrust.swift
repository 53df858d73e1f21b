import Glibc
import RosterRuntime

/// Which peers the daemon trusts, by the uid SO_PEERCRED gives: root and the daemon's own user administer, and
/// they and `[Server] GatewayUsers=` may say whom a connection speaks for (`session.hello` `remote`).
final class PeerTrust {
    let daemonUID: UInt32
    /// `[Server] GatewayUsers=` as uids, resolved by the daemon at start and at each reload (a name is looked up
    /// in the user database, which is I/O, so the answer is handed in).
    var gatewayUIDs: Set<UInt32> = []

    init(daemonUID: UInt32 = getuid()) {
        self.daemonUID = daemonUID
    }

    /// Whether a peer may use `admin.*`: root, or the user the daemon runs as.
    func isAdmin(_ peer: PeerCredentials) -> Bool {
        peer.uid == 0 || peer.uid == daemonUID
    }

    func mayNameRemote(_ peer: PeerCredentials) -> Bool {
        isAdmin(peer) || gatewayUIDs.contains(peer.uid)
    }
}
