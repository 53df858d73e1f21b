import Glibc
import RosterStorage

/// Why a backup failed, with SQLite's details (`SQLiteStorage` answers a `BackupFailure`).
public enum BackupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The target was refused; nothing was written.
    case refused(BackupRefusal)
    /// SQLite or the file system failed while copying; the partial file was removed.
    case store(StoreError)
    /// The database being backed up could not be opened or read whole (a snapshot's source); nothing was published.
    case source(CopyError)

    public var description: String {
        switch self {
        case .refused(let refusal): "backup refused: \(refusal.rawValue)"
        case .store(let error): error.description
        case .source(let error): error.description
        }
    }
}

/// A backup's destination, checked: its directory is open (so that every later step acts on that same
/// directory, whatever happens to the path meanwhile) and the name in it is free and not the live database's.
final class BackupTarget {
    /// The path as the caller gave it.
    let path: String
    /// The file's name in `directory`.
    let name: String
    /// The directory, opened once.
    let directory: Int32

    /// Checks `path` against the live database `live` (nil: the database is not a local file, as PostgreSQL's)
    /// and opens its directory.
    init(path: String, live: DatabaseFiles?) throws(BackupError) {
        self.path = path
        let liveIdentities = live?.existingIdentities() ?? []
        var link = stat()
        if lstat(path, &link) == 0 {
            // Something is there. Say what, following symlinks: a link to the database is the database.
            if let resolved = FileIdentity(path: path), liveIdentities.contains(resolved) {
                throw .refused(.liveDatabase)
            }
            var info = stat()
            let isRegular = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            throw .refused(isRegular ? .targetExists : .notARegularFile)
        }
        guard errno == ENOENT else { throw .refused(.badDirectory) }
        let (parent, base) = DatabaseFiles.split(path)
        guard !base.isEmpty, base != ".", base != ".." else { throw .refused(.notARegularFile) }
        let directory = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .refused(.badDirectory) }
        // An absent name in the live directory may still be one SQLite is about to create (a -wal after a
        // checkpoint, a -journal): publishing a copy under it would be read as the database's own.
        if let live, let here = FileIdentity(descriptor: directory), here == FileIdentity(path: live.directory),
           live.names.contains(base) {
            close(directory)
            throw .refused(.liveDatabase)
        }
        name = base
        self.directory = directory
    }

    deinit { close(directory) }

    /// The directory's path as the kernel knows the descriptor, for SQLite, which opens files by name.
    var directoryPath: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(directory)", &buffer, buffer.count - 1)
        guard count > 0 else { return "/proc/self/fd/\(directory)" }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
