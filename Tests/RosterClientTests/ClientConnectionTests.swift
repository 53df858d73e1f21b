import Glibc
import RosterClient
import RosterProtocol
import Testing

/// The client connection against a daemon the test plays line by line: requests on the wire, answers matched by
/// id whatever their order, events kept for later, timeouts, and the fd a UI polls.
@Suite("The client connection")
struct ClientConnectionTests {
    @Test func aRequestIsOneLineWithTheNextIdAndTheAnswerIsMatchedByIt() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        #expect(try client.send("session.whoami") == 1)
        #expect(try client.send("users.check_username", ["username": "alice1"]) == 2)
        #expect(try daemon.readLine() == #"{"jsonrpc":"2.0","id":1,"method":"session.whoami","params":{}}"#)
        #expect(try daemon.readLine()
                == #"{"jsonrpc":"2.0","id":2,"method":"users.check_username","params":{"username":"alice1"}}"#)
        try daemon.write(#"{"jsonrpc":"2.0","id":1,"result":{"user":null}}"# + "\n")
        #expect(try client.awaitAnswer(id: 1) == .success(["user": nil]))
    }

    @Test func answersThatComeOutOfOrderAreParkedAndEventsOnTheWayAreKept() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        let first = try client.send("form.submit", ["form": "register"])
        let second = try client.send("form.input", ["form": "register", "field": "username", "value": "alice1"])
        try daemon.write(#"{"jsonrpc":"2.0","id":2,"result":{"rev":1}}"# + "\n"
                         + #"{"jsonrpc":"2.0","method":"event","params":{"type":"form","submittable":false}}"# + "\n"
                         + #"{"jsonrpc":"2.0","id":1,"result":{"username":"alice1"}}"# + "\n")
        #expect(try client.awaitAnswer(id: first) == .success(["username": "alice1"]))
        #expect(client.bufferedEvents == [["type": "form", "submittable": false]])
        #expect(client.hasBufferedInput)
        // The buffered event first, then the parked answer, without reading the socket again.
        #expect(try client.receive(timeoutMs: 0) == .event(["type": "form", "submittable": false]))
        #expect(try client.receive(timeoutMs: 0) == .answer(id: second, .success(["rev": 1])))
        #expect(!client.hasBufferedInput)
        #expect(try client.receive(timeoutMs: 0) == nil)
    }

    @Test func anAnswerParkedWhileWaitingForAnEventIsStillTheAnswer() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        let id = try client.send("form.open", ["form": "contacts"])
        try daemon.write(#"{"jsonrpc":"2.0","id":1,"result":{"form":"contacts"}}"# + "\n"
                         + #"{"jsonrpc":"2.0","method":"event","params":{"type":"results","total":0}}"# + "\n")
        #expect(try client.waitForEvent(timeoutMs: 0) == ["type": "results", "total": 0])
        #expect(try client.awaitAnswer(id: id) == .success(["form": "contacts"]))
    }

    @Test func anErrorAnswerIsARemoteErrorWithItsStableReason() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        try daemon.write(#"{"jsonrpc":"2.0","id":1,"error":{"code":1012,"message":"密码错误","data":{"reason":"wrong_password"}}}"#
                         + "\n")
        let answer = try client.call("auth.login", ["username": "alice1", "password": "nope123"])
        #expect(answer == .failure(RemoteError(code: 1012, message: "密码错误", reason: "wrong_password",
                                               data: ["reason": "wrong_password"])))
        // Missing parts read as empty rather than failing the whole answer.
        try daemon.write(#"{"jsonrpc":"2.0","id":2,"error":{}}"# + "\n")
        #expect(try client.call("session.whoami") == .failure(RemoteError(code: 0, message: "", reason: "", data: .null)))
    }

    @Test func anAnswerWithANullIdIsOnlyTheAnswerOfARequestSentAlone() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        let tooLarge = #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too large","data":{"reason":"request_too_large","limit":65536}}}"#
        try daemon.write(tooLarge + "\n")
        let alone = try client.callAlone("contacts.import", ["format": "csv", "data": "name\n"])
        #expect(alone == .failure(RemoteError(code: -32600, message: "too large", reason: "request_too_large",
                                              data: ["reason": "request_too_large", "limit": 65536])))
        // With other requests in flight it concerns nobody: `call` passes it by and runs out of time.
        try daemon.write(tooLarge + "\n")
        client.answerTimeoutMs = 0
        #expect(throws: ClientError.timedOut) { try client.call("session.whoami") }
    }

    @Test func noAnswerWithinTheTimeoutIsTimedOutAndNoEventIsNil() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        client.answerTimeoutMs = 0
        #expect(throws: ClientError.timedOut) { try client.call("session.whoami") }
        #expect(try client.waitForEvent(timeoutMs: 0) == nil)
        #expect(try client.receive(timeoutMs: 0) == nil)
    }

    @Test func aLineSplitAcrossWritesIsReadWholeAndSeveralLinesInOneWriteOneByOne() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        try daemon.write(#"{"jsonrpc":"2.0","method":"event","params":{"type":"ses"#)
        #expect(try client.receive(timeoutMs: 0) == nil)
        try daemon.write(#"sion","user":"alice1"}}"# + "\n"
                         + #"{"jsonrpc":"2.0","method":"event","params":{"type":"session","user":null}}"# + "\n")
        #expect(try client.receive(timeoutMs: 0) == .event(["type": "session", "user": "alice1"]))
        // The second line was read with the first: it waits in the client, not on the socket.
        #expect(client.hasBufferedInput)
        #expect(try client.nextEvent() == ["type": "session", "user": nil])
    }

    @Test func theFileDescriptorIsReadableWhenTheDaemonWrote() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        var entry = pollfd(fd: client.fileDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(Glibc.poll(&entry, 1, 0) == 0)
        try daemon.write(#"{"jsonrpc":"2.0","method":"event","params":{"type":"form"}}"# + "\n")
        #expect(Glibc.poll(&entry, 1, 0) == 1)
        #expect(try client.waitForEvent(timeoutMs: 0) == ["type": "form"])
    }

    @Test func somethingThatIsNotJSONIsAMalformedAnswer() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        try daemon.write("not json\n")
        #expect(throws: ClientError.malformedAnswer("not json")) { try client.call("session.whoami") }
    }

    @Test func aDaemonThatHangsUpIsAClosedConnection() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        daemon.close()
        #expect(throws: ClientError.connectionClosed) { try client.call("session.whoami") }
        client.close()
        #expect(client.fileDescriptor == -1)
        #expect(throws: ClientError.connectionClosed) { try client.receive(timeoutMs: 0) }
    }

    @Test func noDaemonAtThePathIsDaemonNotRunning() throws {
        let daemon = try FakeDaemon()
        let missing = daemon.directory + "/nobody.sock"
        #expect(throws: ClientError.daemonNotRunning(socket: missing)) { try ClientConnection(socketPath: missing) }
        // A plain file where the socket should be reads the same to a user as no file.
        let plain = daemon.directory + "/plain"
        let fd = open(plain, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        Glibc.close(fd)
        defer { unlink(plain) }
        #expect(throws: ClientError.daemonNotRunning(socket: plain)) { try ClientConnection(socketPath: plain) }
        #expect(ClientError.daemonNotRunning(socket: missing).description
                == "rosterd is not running (no one listens on \(missing))")
    }

    @Test func helloSaysTheLocaleAndTheClientAndResumeGivesTheUsername() throws {
        let daemon = try FakeDaemon()
        let client = try daemon.connect()
        try daemon.write(#"{"jsonrpc":"2.0","id":1,"result":{"locale":"en"}}"# + "\n"
                         + #"{"jsonrpc":"2.0","id":2,"result":{"username":"alice1"}}"# + "\n"
                         + #"{"jsonrpc":"2.0","id":3,"error":{"code":1011,"message":"","data":{"reason":"not_found"}}}"# + "\n")
        #expect(try client.hello(locale: "en", timing: ["debounce_ms": 0]) == .success(["locale": "en"]))
        #expect(try daemon.readLine()
                == #"{"jsonrpc":"2.0","id":1,"method":"session.hello","params":{"client":"rosterctl","locale":"en","timing":{"debounce_ms":0}}}"#)
        #expect(try client.resume(token: "t1") == "alice1")
        #expect(try daemon.readLine() == #"{"jsonrpc":"2.0","id":2,"method":"session.resume","params":{"token":"t1"}}"#)
        #expect(try client.resume(token: "gone") == nil)
    }
}
