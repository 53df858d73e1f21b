import Glibc
import Testing

/// rosterd's key file at start: made beside the database when missing, kept across restarts, and any key file it
/// cannot trust refuses the start with its path and reason.
@Suite("Key file at start")
struct KeyFileStartTests {
    private func bytes(_ path: String) -> [UInt8] {
        guard let file = fopen(path, "rb") else { return [] }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = fread(&buffer, 1, buffer.count, file)
        return Array(buffer.prefix(count))
    }

    private func writeKey(_ path: String, count: Int = 32, mode: mode_t) throws {
        try writeFile(path, String(repeating: "k", count: count))
        #expect(chmod(path, mode) == 0)
    }

    /// Starts rosterd on `directory` expecting it to refuse; returns its stderr.
    private func refusedStart(_ directory: TemporaryDirectory, config: String? = nil) throws -> String {
        let daemon = try TestDaemon(directory: directory, config: config, waitUntilReady: false)
        let status = daemon.waitForExit()
        #expect(status == 1)
        #expect(access(daemon.socketPath, F_OK) != 0)
        return daemon.stderr
    }

    @Test func aMissingKeyFileIsCreatedBesideTheDatabaseAndKeptAcrossRestarts() throws {
        let directory = try TemporaryDirectory()
        let key = directory.path + "/state/roster.key"
        var first = try TestDaemon(directory: directory)
        var info = stat()
        #expect(lstat(key, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFREG)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_size == 32)
        let made = bytes(key)
        first.stop()
        first = try TestDaemon(directory: directory)
        #expect(bytes(key) == made)
        first.stop()
    }

    @Test func aGroupReadableKeyFileRefusesTheStartWithItsPathAndReason() throws {
        let directory = try TemporaryDirectory()
        #expect(mkdir(directory.path + "/state", 0o700) == 0)
        let key = directory.path + "/state/roster.key"
        try writeKey(key, mode: 0o640)
        let stderr = try refusedStart(directory)
        #expect(stderr.contains("key file \(key) has mode 640"))
        #expect(stderr.contains("[too_permissive]"))
        // Refused, not repaired: the file is exactly as it was.
        var info = stat()
        #expect(stat(key, &info) == 0 && info.st_mode & 0o777 == 0o640)
    }

    @Test func aSymlinkOrAShortKeyFileRefusesTheStart() throws {
        let directory = try TemporaryDirectory()
        #expect(mkdir(directory.path + "/state", 0o700) == 0)
        let key = directory.path + "/state/roster.key"
        try writeKey(directory.path + "/elsewhere.key", mode: 0o600)
        #expect(symlink(directory.path + "/elsewhere.key", key) == 0)
        #expect(try refusedStart(directory).contains("key file \(key) is a symbolic link [symlink]"))
        #expect(unlink(key) == 0)
        try writeKey(key, count: 31, mode: 0o600)
        #expect(try refusedStart(directory).contains("key file \(key) holds 31 bytes, not 32 [wrong_size]"))
    }

    @Test func secretsKeyFileNamesAnotherPlace() throws {
        let directory = try TemporaryDirectory()
        let key = directory.path + "/keys/main.key"
        let config = "[Secrets]\nKeyFile=\(key)\n"
        let daemon = try TestDaemon(directory: directory, config: config)
        #expect(bytes(key).count == 32)
        #expect(access(directory.path + "/state/roster.key", F_OK) != 0)
        // A clean stop removes the socket, so the refused start below is seen not to make one.
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        #expect(chmod(key, 0o604) == 0)
        #expect(try refusedStart(directory, config: config).contains("key file \(key) has mode 604"))
    }
}
