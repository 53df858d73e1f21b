import RosterRuntime

/// A backend that keeps a `UsernameDirectory`: how a username check is answered from it, written once. The
/// directory answers while it is filled and the backend runs; otherwise (still loading, a failed fill, stopped)
/// the backend's database does.
public protocol UsernameDirectoryStorage: AccountStorage {
    /// The names in memory, kept in step by the backend's own writes and what it hears of others'.
    var usernames: UsernameDirectory { get }
    /// After `stop()`, nothing is answered from memory: the database's answer (`.unavailable`) is the truth.
    var isStopped: Bool { get }
    /// Asks the database, when the directory cannot tell.
    func readUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)
}

extension UsernameDirectoryStorage {
    public func knownUsernameTaken(_ canonical: String) -> Bool? {
        isStopped ? nil : usernames.contains(canonical)
    }

    public func isUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        if let taken = knownUsernameTaken(canonical) { return completion(.success(taken)) }
        readUsernameTaken(canonical, charge: charge, completion: completion)
    }
}
