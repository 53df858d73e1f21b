import Glibc
import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The whole server, over a socketpair, on a storage that answers after its calls return: the check_username
/// fast lane still answers (byte for byte as when the storage answers at once), and requests held behind a
/// log-in still go in order.
@Suite("The server on a storage that answers later")
struct LateStorageServerTests {
    /// A server on `storage` and its peer's end of a socketpair.
    final class Peer {
        let loop: EventLoop
        let server: Server
        let storage: InMemoryStorage
        let fd: Int32
        private var buffered: [UInt8] = []
        private(set) var lines: [String] = []

        init(answering: InMemoryStorage.Answering) throws {
            loop = try EventLoop(signals: [])
            var config = DaemonConfig()
            // The cheapest Argon2id libsodium allows: these tests are about order, not hashing.
            config.policy.hashMemoryKiB = 8
            config.policy.hashIterations = 1
            storage = InMemoryStorage(answering: answering)
            let passwords = PasswordLanes(settings: config.server, cores: 1, policy: config.policy, loop: loop,
                                          logger: Logger(level: .emerg))
            server = Server(loop: loop, config: config, storage: storage, passwords: passwords,
                            contacts: ContactsService(storage: storage), logger: Logger(level: .emerg), secrets: testSecrets)
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                throw SystemError(errno: errno, call: "socketpair")
            }
            fd = fds[1]
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            server.serve(connectedSocket: fds[0])
        }

        deinit { close(fd) }

        func send(_ text: String) {
            _ = text.utf8CString.withUnsafeBufferPointer { Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
        }

        /// Turns the loop, answering whatever the storage holds, until `count` lines arrived (or 10 s passed).
        func read(_ count: Int) throws -> [String] {
            let deadline = loop.now + .seconds(10)
            while lines.count < count && loop.now < deadline {
                storage.releaseAll()
                try turn()
            }
            return lines
        }

        /// Turns the loop a few times without answering what the storage holds.
        func idle() throws {
            for _ in 0..<5 { try turn() }
        }

        private func turn() throws {
            try loop.runOnce(timeoutMs: 5)
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got > 0 { buffered += chunk[0..<got] }
            while let newline = buffered.firstIndex(of: 10) {
                lines.append(String(decoding: buffered[..<newline], as: UTF8.self))
                buffered.removeSubrange(...newline)
            }
        }
    }

    private static func checkUsername(_ id: Int, _ name: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"users.check_username","params":{"username":"\#(name)"}}"# + "\n"
    }

    @Test func theFastLaneAnswersLaterWhatItAnswersAtOnceByteForByte() throws {
        let requests = Self.checkUsername(1, "alice1") + Self.checkUsername(2, "ab") + Self.checkUsername(3, "bob123")
        let now = try Peer(answering: .immediately)
        now.storage.acting(for: .daemon).createAccount(NewAccount(username: "bob123", display: "bob123", email: nil,
                                                                  passwordHash: "$argon2id$placeholder")) { _ in }
        now.send(requests)
        let atOnce = try now.read(3)

        let later = try Peer(answering: .onRelease)
        later.storage.answering = .immediately
        later.storage.acting(for: .daemon).createAccount(NewAccount(username: "bob123", display: "bob123", email: nil,
                                                                    passwordHash: "$argon2id$placeholder")) { _ in }
        later.storage.answering = .onRelease
        later.send(requests)
        try later.idle()
        // The local rules settle "ab" at once; the other two wait for the storage, in flight.
        #expect(later.lines.count == 1)
        #expect(later.lines.first?.contains(#""id":2,"#) == true)
        #expect(later.storage.pending == [.isUsernameTaken, .isUsernameTaken])
        let answered = try later.read(3)
        #expect(answered == [atOnce[1], atOnce[0], atOnce[2]])
        #expect(atOnce[0].contains(#""code":"available""#) && atOnce[2].contains(#""code":"taken""#))
    }

    @Test func requestsHeldBehindALogInAreServedInOrderWhenItsAnswersComeLater() throws {
        let peer = try Peer(answering: .onRelease)
        let hash = try PasswordHasher(memoryKiB: 8, iterations: 1).hash("secret1")
        peer.storage.answering = .immediately
        peer.storage.acting(for: .daemon).createAccount(NewAccount(username: "alice1", display: "alice1", email: nil, passwordHash: hash)) { _ in }
        peer.storage.answering = .onRelease
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"auth.login","params":{"username":"alice1","password":"secret1"}}"#
                  + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"session.whoami"}"# + "\n" + Self.checkUsername(3, "alice1"))
        try peer.idle()
        // The log-in waits for its account; what follows it waits for the log-in.
        #expect(peer.lines.isEmpty)
        let lines = try peer.read(4)
        #expect(lines.count == 4)
        #expect(lines.first?.contains(#""type":"session""#) == true)
        #expect(lines.dropFirst().first?.contains(#""id":1,"result":{"username":"alice1","token":"#) == true)
        #expect(lines.dropFirst(2).first == #"{"jsonrpc":"2.0","id":2,"result":{"user":{"username":"alice1"}}}"#)
        #expect(lines.dropFirst(3).first?.contains(#""id":3,"result":{"state":"invalid","code":"taken""#) == true)
    }
}
