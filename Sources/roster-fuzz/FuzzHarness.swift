import Glibc
import RosterCore
import RosterCrypto
import RosterRuntime
import RosterServer
import RosterSQLite

/// Feeds arbitrary bytes to a real in-process server, the way a peer would: framer, request decoder,
/// dispatcher and every method behind it, over a socketpair, until the server has answered and closed.
final class FuzzHarness {
    private let loop: EventLoop
    private let server: Server

    init() {
        var template = Array("/tmp/roster-fuzz-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
        }
        var config = DaemonConfig()
        // Cheapest Argon2id libsodium allows: the fuzzer explores parsing and state, not hashing.
        config.policy.hashMemoryKiB = 8
        config.policy.hashIterations = 1
        config.policy.rateLimitBurst = 1_000_000
        let logger = Logger(level: .emerg)
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let clock = SystemWallClock()
        do {
            loop = try EventLoop(signals: [])
            // The fuzzer's own composition root: a fresh SQLite file, as rosterd would open it by default.
            let storage = try SQLiteStorage.open(path: directory + "/fuzz.db", loop: loop, settings: config.server,
                                                 cores: cores, clock: clock, logger: logger, keyCheck: nil)
            server = try Server.assembled(loop: loop, config: config, storage: storage, cores: cores, logger: logger,
                                      secrets: try AccountSecrets.ephemeral(), hostName: "fuzz.invalid", clock: clock)
        } catch {
            fatalError("the fuzz harness cannot start a server: \(error)")
        }
    }

    /// One peer: connect, send everything, half-close, read until the server closes (or a generous bound).
    func feed(_ bytes: UnsafeRawBufferPointer) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { return }
        let peer = fds[1]
        _ = fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK)
        server.serve(connectedSocket: fds[0])
        var offset = 0
        var closed = false
        var turns = 0
        var sink = [UInt8](repeating: 0, count: 65_536)
        while !closed && turns < 2_000 {
            turns += 1
            if offset < bytes.count, let base = bytes.baseAddress {
                let written = send(peer, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if written > 0 { offset += written }
                if offset == bytes.count { shutdown(peer, Int32(SHUT_WR)) }
            } else if offset == bytes.count && bytes.isEmpty {
                shutdown(peer, Int32(SHUT_WR))
                offset = 1
            }
            runLoopOnce(timeoutMs: 5)
            while true {
                let count = sink.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
                if count == 0 { closed = true }
                if count <= 0 { break }
            }
        }
        close(peer)
        // Let the server notice the close, so connections never pile up across inputs.
        runLoopOnce(timeoutMs: 0)
    }

    /// One turn of the server's loop; a loop that fails is a finding, so it stops the fuzzer loudly.
    private func runLoopOnce(timeoutMs: Int32) {
        do {
            try loop.runOnce(timeoutMs: timeoutMs)
        } catch {
            fatalError("the event loop failed: \(error)")
        }
    }
}
