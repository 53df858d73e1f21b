import Glibc
import RosterCore
import RosterRuntime
import RosterHostIO

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
            guard let text = TextFile.read(path) else {
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
}
