import Glibc

/// The files that make up one live database: the main file and what SQLite and Roster keep beside it.
///
/// SQLite follows a symlinked database to its real place and puts `-wal`, `-shm` and `-journal` there, so
/// names are taken after resolving symlinks; two paths to one file name the same `DatabaseFiles`.
public struct DatabaseFiles: Equatable, Sendable {
    /// The database's directory, symlinks resolved.
    public let directory: String
    /// The database file's name in `directory`.
    public let name: String

    public init(path: String) {
        if let resolved = Self.realPath(path) {
            (directory, name) = Self.split(resolved)
        } else {
            // Not created yet: the directory exists (the daemon makes it) and the file will be made in it.
            let (parent, base) = Self.split(path)
            directory = Self.realPath(parent) ?? parent
            name = base
        }
    }

    /// The main file, by its resolved path.
    public var path: String { join(name) }

    /// `roster.db.lock`: held by the daemon that serves this database (see `DatabaseLock`).
    public var lockPath: String { join(name + ".lock") }

    /// `roster.db.clean`: the mark of a clean shutdown (see `CleanShutdown`).
    public var cleanMarkPath: String { join(name + ".clean") }

    /// Names in `directory` that belong to the live database, whether or not they exist right now: SQLite may
    /// create its sidecars at any moment, so a file put there under one of these names would be taken for one.
    public var names: [String] {
        [name, name + "-wal", name + "-shm", name + "-journal", name + ".lock", name + ".clean"]
    }

    /// Device and inode of every one of `names` that exists now (hard links and symlinks included).
    public func existingIdentities() -> [FileIdentity] {
        names.compactMap { FileIdentity(path: join($0)) }
    }

    private func join(_ child: String) -> String {
        directory == "/" ? "/" + child : directory + "/" + child
    }

    /// `(directory, name)` of a path; a bare name is in ".".
    static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let parent = String(path[..<slash])
        return (parent.isEmpty ? "/" : parent, String(path[path.index(after: slash)...]))
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// A file's device and inode: what makes two paths the same file.
public struct FileIdentity: Equatable, Hashable, Sendable {
    public let device: UInt64
    public let inode: UInt64

    /// The file `path` names, symlinks followed; nil when there is none.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The file open on `descriptor`.
    public init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
