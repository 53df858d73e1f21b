import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The storage feed on its own, over an in-memory storage and a session book with no connection: how the
/// storage's state is logged and shown, and where audit entries go. (What changes do to live sessions is seen
/// across the whole server in StorageFeedServerTests.)
@Suite("The storage feed")
struct StorageFeedTests {
    let storage = InMemoryStorage()
    let log = KeptLog()
    let feed: StorageFeed
    let phaseChanges = Locked(0)
    let heard = Locked<[Int64]>([])

    init() {
        let logger = Logger(level: .debug, sink: log)
        let config = DaemonConfig()
        let contacts = ContactsService(storage: storage)
        let sessions = SessionBook(connections: ConnectionTable<Connection>(), contacts: contacts, storage: storage,
                                   output: ServerOutput(scheduler: ManualScheduler(), settings: config.server),
                                   stats: ServerStats(), trust: PeerTrust(), config: config, logger: logger)
        feed = StorageFeed(storage: storage, sessions: sessions, contacts: contacts, logger: logger,
                           sessionIdle: config.policy.sessionIdle)
        let phaseChanges = self.phaseChanges, heard = self.heard
        feed.onPhaseChange = { phaseChanges.withLock { $0 += 1 } }
        feed.onAudit = { entry in heard.withLock { $0.append(entry.id) } }
    }

    @Test func listensToTheStorageFromTheStart() {
        #expect(storage.onChange != nil && storage.onStateChange != nil && storage.onAudit != nil)
        #expect(feed.state == storage.state)
    }

    @Test func aPhaseChangeIsLoggedOnceAndShownInTheStatusLine() {
        let down = StorageState(backend: "postgresql", phase: .down, sinceMs: 1_796_114_400_000)
        storage.onStateChange?(StorageState(backend: "postgresql", phase: .up, sinceMs: 1_796_114_000_000))
        #expect(log.messages.isEmpty, "up after up is no change")
        storage.onStateChange?(down)
        storage.onStateChange?(StorageState(backend: "postgresql", phase: .down, sinceMs: 1_796_114_401_000))
        #expect(feed.state.sinceMs == 1_796_114_401_000, "the latest report is the state")
        #expect(feed.status == "storage postgresql down since \(UTCTime.rfc3339(unixMs: 1_796_114_401_000))")
        storage.onStateChange?(StorageState(backend: "postgresql", phase: .up, sinceMs: 1_796_114_460_000))
        #expect(log.messages == [
            "storage postgresql is down since \(UTCTime.rfc3339(unixMs: down.sinceMs)): requests that need it answer "
                + "storage_unavailable until it is back",
            "storage postgresql is up again after 59 s down",
        ])
        #expect(feed.status == nil)
        storage.onStateChange?(StorageState(backend: "postgresql", phase: .connecting, sinceMs: 1_796_114_470_000))
        #expect(feed.status == "storage postgresql connecting")
        #expect(log.kept.last?.fields == ["ROSTER_STORAGE": "postgresql", "ROSTER_STORAGE_STATE": "connecting"])
        #expect(phaseChanges.withLock { $0 } == 3, "down, up and connecting; up again after up is no change")
    }

    @Test func onlyThisDaemonsEntriesAreJournaledAndEveryEntryGoesOnToTheFollowers() {
        let record = AuditRecord(event: .login, username: "alice1", peer: AuditPeer(uid: 1, pid: 2, client: "web"))
        storage.onAudit?(AuditEntry(id: 7, timeMs: 1, record: record), .elsewhere)
        storage.onAudit?(AuditEntry(id: 8, timeMs: 2, record: record), .here)
        #expect(heard.withLock { $0 } == [7, 8])
        #expect(log.kept.filter { $0.message.hasPrefix("audit: ") }.map(\.fields) == [[
            "ROSTER_EVENT": "login", "ROSTER_USER": "alice1", "ROSTER_PEER_UID": "1", "ROSTER_PEER_PID": "2",
            "ROSTER_CLIENT": "web", "ROSTER_OUTCOME": "succeeded", "ROSTER_AUDIT_ID": "8",
        ]])
    }
}
