import Glibc
import RosterClient
import RosterProtocol
import Testing

/// The RosterClient library against the real daemon: answers by id, events as a stream, timeouts, errors.
@Suite("RosterClient against rosterd", .serialized)
struct RosterctlClientTests {
    @Test func helloThenAFormStreamsEventsBetweenAnswers() throws {
        let daemon = try TestDaemon()
        let connection = try ClientConnection(socketPath: daemon.socketPath)
        let hello = try connection.hello(locale: "en", timing: ["debounce_ms": 0])
        #expect((try? hello.get())?["locale"] == "en")
        _ = try connection.call("form.open", ["form": "register"]).get()
        _ = try connection.call("form.input", ["form": "register", "field": "username", "value": "abc"]).get()
        let event = try #require(try connection.waitForEvent(timeoutMs: 5_000))
        #expect(event["type"] == "field")
        #expect(event["code"] == "too_short")
        #expect(event["message"] == "The username must be at least 6 characters long")
    }

    @Test func answersAreMatchedByIdWhateverTheOrder() throws {
        let daemon = try TestDaemon()
        let connection = try ClientConnection(socketPath: daemon.socketPath)
        let first = try connection.send("session.whoami")
        let second = try connection.send("no.such")
        let secondAnswer = try connection.awaitAnswer(id: second)
        #expect((try? secondAnswer.get()) == nil)
        if case .failure(let error) = secondAnswer { #expect(error.reason == "method_not_found") }
        #expect(try connection.awaitAnswer(id: first).get()["user"] == .null)
    }

    @Test func waitingForAnEventTimesOutWithNil() throws {
        let daemon = try TestDaemon()
        let connection = try ClientConnection(socketPath: daemon.socketPath)
        _ = try connection.hello(locale: "en")
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        #expect(try connection.waitForEvent(timeoutMs: 150) == nil)
        #expect(try connection.receive(timeoutMs: 0) == nil)
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        let elapsedMs = (end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1_000_000
        #expect(elapsedMs >= 140)
    }

    @Test func connectFailuresNameTheSocket() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: ClientError.daemonNotRunning(socket: directory.path + "/none.sock")) {
            try ClientConnection(socketPath: directory.path + "/none.sock")
        }
        // A plain file where the socket should be reads as "not running" too (a killed daemon's leftover is a socket,
        // but a user's typo may be anything).
        try writeFile(directory.path + "/file", "")
        #expect(throws: ClientError.daemonNotRunning(socket: directory.path + "/file")) {
            try ClientConnection(socketPath: directory.path + "/file")
        }
    }

    @Test func aClosedConnectionIsReported() throws {
        let daemon = try TestDaemon()
        let connection = try ClientConnection(socketPath: daemon.socketPath)
        daemon.signal(SIGTERM)
        _ = daemon.waitForExit()
        #expect(throws: ClientError.connectionClosed) { try connection.waitForEvent(timeoutMs: 5_000) }
    }
}
