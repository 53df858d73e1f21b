/// A backend that keeps a `UsernameDirectory`: how `Storage.knownUsernameTaken` is answered from it, written
/// once. The directory answers while it is filled and the backend runs; otherwise (still loading, a failed fill,
/// stopped) only the database can tell, and the backend's `isUsernameTaken` asks it.
public protocol UsernameDirectoryStorage: AnyObject {
    /// The names in memory, kept in step by the backend's own writes and what it hears of others'.
    var usernames: UsernameDirectory { get }
    /// After `stop()`, nothing is answered from memory: the database's answer (`.unavailable`) is the truth.
    var isStopped: Bool { get }
}

extension UsernameDirectoryStorage {
    public func knownUsernameTaken(_ canonical: String) -> Bool? {
        isStopped ? nil : usernames.contains(canonical)
    }
}
