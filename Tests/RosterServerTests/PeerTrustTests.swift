import RosterRuntime
import Testing
@testable import RosterServer

@Suite("Which peers the daemon trusts")
struct PeerTrustTests {
    private func peer(_ uid: UInt32) -> PeerCredentials { PeerCredentials(pid: 1, uid: uid, gid: uid) }

    @Test func rootAndTheDaemonsUserAdministerAndGatewaysOnlyNameRemotes() {
        let trust = PeerTrust(daemonUID: 990)
        trust.gatewayUIDs = [33]
        #expect(trust.isAdmin(peer(0)) && trust.isAdmin(peer(990)))
        #expect(!trust.isAdmin(peer(33)) && !trust.isAdmin(peer(1000)))
        #expect(trust.mayNameRemote(peer(0)) && trust.mayNameRemote(peer(990)) && trust.mayNameRemote(peer(33)))
        #expect(!trust.mayNameRemote(peer(1000)))
        trust.gatewayUIDs = []
        #expect(!trust.mayNameRemote(peer(33)), "a reload that drops a gateway takes its trust at once")
    }
}
