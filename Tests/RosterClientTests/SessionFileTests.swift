import Glibc
import RosterClient
import Testing

/// Where a log-in's token is kept between commands: private, replaced whole, and gone when removed.
@Suite("The session file")
struct SessionFileTests {
    private func temporaryDirectory() throws -> String {
        var template = Array("/tmp/roster-session-tests-XXXXXX".utf8CString)
        let made = try #require(template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } })
        return String(cString: made)
    }

    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    @Test func onlyAnAbsoluteRuntimeDirectoryHasASessionFile() {
        #expect(SessionFile.forEnvironment(["XDG_RUNTIME_DIR": "/run/user/1000"])?.path == "/run/user/1000/roster/session")
        #expect(SessionFile.forEnvironment(["XDG_RUNTIME_DIR": "run/user/1000"]) == nil)
        #expect(SessionFile.forEnvironment([:]) == nil)
    }

    @Test func aTokenIsKeptPrivateReplacedAndRemoved() throws {
        let runtime = try temporaryDirectory()
        let file = SessionFile(directory: runtime + "/roster")
        defer { file.remove(); rmdir(file.directory); rmdir(runtime) }
        #expect(file.read() == nil)
        try file.write("first-token")
        #expect(file.read() == "first-token")
        #expect(mode(file.directory) == 0o700)
        #expect(mode(file.path) == 0o600)
        try file.write("second-token")
        #expect(file.read() == "second-token")
        #expect(mode(file.path + ".tmp") == nil)
        file.remove()
        #expect(file.read() == nil)
    }

    @Test func aFileOfWhitespaceReadsAsLoggedOut() throws {
        let runtime = try temporaryDirectory()
        let file = SessionFile(directory: runtime)
        defer { file.remove(); rmdir(runtime) }
        try file.write("  ")
        #expect(file.read() == nil)
    }

    @Test func aDirectoryThatCannotBeMadeIsSaidWithItsPath() throws {
        let runtime = try temporaryDirectory()
        defer { rmdir(runtime) }
        let file = SessionFile(directory: runtime + "/missing/roster")
        #expect(throws: SessionFile.Failure.self) { try file.write("token") }
        #expect(SessionFile.Failure.cannotWrite(path: file.directory, errno: ENOENT).description
                == "cannot write \(file.directory): No such file or directory")
    }
}
