/// Which configuration files the daemon reads, and in what order; pure, so the daemon lists directories and passes
/// the names in.
///
/// The default order is what `systemd-analyze cat-config roster/rosterd.conf` prints: the main file, then every
/// `*.conf` drop-in of the three `rosterd.conf.d` directories sorted by file name alone (byte order, as `strcmp`),
/// where a name present in several directories is read only from the most important one (`/etc` over `/run` over
/// `/usr/lib`). That lets a vendor ship `/usr/lib/roster/rosterd.conf.d/50-vendor.conf` and an administrator replace it
/// with an `/etc` file of the same name, or mask it with a symlink to `/dev/null` (which reads as empty).
public enum ConfigPaths {
    /// The administrator's main file (the `--config` default).
    public static let mainFile = "/etc/roster/rosterd.conf"

    /// The drop-in directories, least important first: `/usr/lib` (vendor), `/usr/local/lib` (local vendor),
    /// `/run` (runtime), `/etc` (administrator).
    public static let dropInDirectories = [
        "/usr/lib/roster/rosterd.conf.d",
        // systemd-analyze cat-config searches /usr/local/lib too, between /run and /usr/lib.
        "/usr/local/lib/roster/rosterd.conf.d",
        "/run/roster/rosterd.conf.d",
        "/etc/roster/rosterd.conf.d",
    ]

    /// The files to read, lowest priority first, so later files override earlier ones key by key.
    ///
    /// - Parameters:
    ///   - mainFile: the main file if it exists, else nil.
    ///   - dropIns: each directory with the names it holds (in any order), least important directory FIRST, as in
    ///     `dropInDirectories`; a missing directory may be left out or given with no names.
    public static func catConfigOrder(mainFile: String?,
                                      dropIns: [(directory: String, fileNames: [String])]) -> [String] {
        // Later directories are more important, so a later one simply overwrites the winner for a name.
        var winner: [String: String] = [:]
        for (directory, fileNames) in dropIns {
            for name in fileNames where isDropInName(name) {
                winner[name] = join(directory, name)
            }
        }
        let names = winner.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return (mainFile.map { [$0] } ?? []) + names.compactMap { winner[$0] }
    }

    /// `PATH.d`, the drop-in directory that goes with `--config PATH`.
    public static func dropInDirectory(forConfigFile configFile: String) -> String {
        var trimmed = configFile
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed + ".d"
    }

    /// With `--config PATH`: that file, then the `*.conf` names found in `PATH.d`, sorted; nothing from the default
    /// directories, so a test or a second instance is not affected by the host's configuration.
    public static func explicitConfigOrder(configFile: String, dropInFileNames: [String]) -> [String] {
        catConfigOrder(mainFile: configFile,
                       dropIns: [(directory: dropInDirectory(forConfigFile: configFile), fileNames: dropInFileNames)])
    }

    /// A name systemd's `conf_files_list()` would pick: ends in `.conf`, is not hidden (editors' and package managers'
    /// leftovers start with a dot), and is a plain name rather than a path.
    public static func isDropInName(_ name: String) -> Bool {
        name.hasSuffix(".conf") && name.count > ".conf".count && !name.hasPrefix(".") && !name.contains("/")
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
