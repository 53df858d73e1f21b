/// Everything the server keeps: the one type it holds a backend as. Only the composition root names a backend.
///
/// Rules every backend follows (the storage contract suite checks them):
/// - every completion runs once, on the loop thread;
/// - an answered write is durable (it survives `kill -9` of the daemon);
/// - uniqueness of usernames and emails holds across every writer, without regard to case (callers canonicalize);
/// - one user's contact writes, imports, exports and index loads complete in the order they were made;
/// - failures are `StorageFailure`s; details go to the backend's log, never stored values.
public protocol Storage: AccountStorage, AccountLifeStorage, AdminStorage, SessionTokenStorage, LoginFailureStorage, ContactStorage, AuditStorage,
    StorageMaintenance,
    StorageChangeFeed {}
