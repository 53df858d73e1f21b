import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
@testable import RosterServer

/// The sessions the account and session methods change, recorded; revocations during resumes as the server keeps
/// them.
final class RecordingSessions: AccountSessions, SessionChanges {
    let policy: Policy
    /// A test may swap it, as a reload swaps the server's.
    var logger = Logger(level: .emerg)
    private(set) var registered: [String] = []
    private(set) var loggedIn: [(username: String, tokenHash: [UInt8]?)] = []
    var revocations = RevocationsDuringResumes()
    /// What `rpc.describe` lists.
    var methodSpecs: [MethodSpec] = []
    /// The uids `session.hello` takes a `remote` from.
    var trustedUIDs: Set<UInt32> = [0]
    /// Log-outs and revocations, in order, by the host's id.
    private(set) var endings: [Ending] = []

    enum Ending: Equatable {
        case loggedOut(host: UInt64)
        case tokenRevoked([UInt8], except: UInt64?)
    }

    init(policy: Policy) { self.policy = policy }

    func accountRegistered(_ account: Account, by peer: PeerCredentials) { registered.append(account.username) }

    func logIn(_ host: RecordingCallHost, as account: Account, tokenHash: [UInt8]?) {
        host.session.user = account
        host.session.tokenHash = tokenHash
        loggedIn.append((account.username, tokenHash))
    }

    func resumeStarted() -> UInt64 { revocations.resumeStarted() }

    func resumeEnded(startedAt start: UInt64, hash: [UInt8]?, account: AccountID?) -> Bool {
        revocations.resumeEnded(startedAt: start, hash: hash, account: account)
    }

    func mayNameRemote(_ peer: PeerCredentials) -> Bool { trustedUIDs.contains(peer.uid) }

    func logOut(_ host: RecordingCallHost) {
        host.session.user = nil
        host.session.tokenHash = nil
        endings.append(.loggedOut(host: host.id))
    }

    func tokenRevoked(_ hash: [UInt8], except origin: RecordingCallHost?) {
        endings.append(.tokenRevoked(hash, except: origin?.id))
    }
}
