import Glibc
import RosterRuntime

/// A directory under /tmp removed with its files when the value goes, for stand-in programs and what they record.
public final class ScratchDirectory {
    public let path: String

    public init() throws {
        var template = Array("/tmp/roster-sendmail-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let made else { throw SystemError(errno: errno, call: "mkdtemp") }
        path = made
    }

    deinit {
        guard let directory = opendir(path) else { return }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { unlink(path + "/" + name) }
        }
        closedir(directory)
        rmdir(path)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes an executable script `name` holding `body` after a `#!/bin/sh` line; its path.
    public func script(_ name: String, _ body: String, mode: mode_t = 0o755) throws -> String {
        let path = file(name)
        try write(path, "#!/bin/sh\n" + body + "\n", mode: mode)
        return path
    }

    public func write(_ path: String, _ text: String, mode: mode_t = 0o644) throws {
        try write(path, Array(text.utf8), mode: mode)
    }

    public func write(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemError(errno: errno, call: "open \(path)") }
        defer { close(fd) }
        fchmod(fd, mode)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard count > 0 else { throw SystemError(errno: errno, call: "write \(path)") }
            offset += count
        }
    }

    /// The file's bytes, or nil when it does not exist.
    public func read(_ name: String) -> [UInt8]? {
        let fd = open(file(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    public func text(_ name: String) -> String? { read(name).map { String(decoding: $0, as: UTF8.self) } }

    public func lines(_ name: String) -> [String]? {
        text(name).map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast() }
            .map(Array.init)
    }
}
