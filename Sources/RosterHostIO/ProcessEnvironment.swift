// RosterHostIO: what a Roster process reads from its host, without Foundation: its environment here, whole
// small files in TextFile.swift. Such I/O lives in this module so that RosterCore stays pure and RosterProtocol
// stays the wire alone.
import Glibc

/// The process environment as a dictionary, read from `environ` without Foundation.
public enum ProcessEnvironment {
    /// Each executable's main reads it once and passes it down, so code below takes the environment as a value
    /// and a test can hand it any environment it likes.
    public static var current: [String: String] {
        var result: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let pair = String(cString: entry)
            if let equals = pair.firstIndex(of: "=") {
                result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            }
            cursor += 1
        }
        return result
    }

    /// The host's name as gethostname(2) gives it (`[Mail] From=`'s default domain), or "" when it cannot be read.
    public static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
