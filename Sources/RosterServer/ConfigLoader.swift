import Glibc
import RosterCore

/// Reads the configuration files from disk in cat-config order and parses them; the parsing itself is pure.
public enum ConfigLoader {
    /// Loads `/etc/roster/rosterd.conf` and the drop-in directories, or `configPath` and `configPath.d` when given.
    /// A missing default file means defaults; a missing explicit file is an error, since someone asked for it.
    public static func load(configPath: String?) throws(ConfigError) -> DaemonConfig {
        let paths: [String]
        if let configPath {
            guard isReadableFile(configPath) else {
                throw ConfigError(kind: .invalidValue, path: configPath, line: 0, detail: "cannot read the file: \(String(cString: strerror(errno)))")
            }
            let directory = ConfigPaths.dropInDirectory(forConfigFile: configPath)
            paths = ConfigPaths.explicitConfigOrder(configFile: configPath, dropInFileNames: listDirectory(directory))
        } else {
            let main = isReadableFile(ConfigPaths.mainFile) ? ConfigPaths.mainFile : nil
            let dropIns = ConfigPaths.dropInDirectories.map { (directory: $0, fileNames: listDirectory($0)) }
            paths = ConfigPaths.catConfigOrder(mainFile: main, dropIns: dropIns)
        }
        var files: [(path: String, text: String)] = []
        for path in paths {
            guard let text = readTextFile(path) else {
                throw ConfigError(kind: .invalidValue, path: path, line: 0, detail: "cannot read the file: \(String(cString: strerror(errno)))")
            }
            files.append((path, text))
        }
        return try DaemonConfig.parse(files: files)
    }

    private static func isReadableFile(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }

    private static func listDirectory(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The whole file as UTF-8 text; a symlink to /dev/null (systemd's way to mask a drop-in) reads as empty.
    static func readTextFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
