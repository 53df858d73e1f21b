import RosterRuntime

/// Everything the server keeps: the one type it holds a backend as. Only the composition root names a backend.
///
/// Rules every backend follows (the storage contract suite checks them):
/// - every completion runs once, on the loop thread;
/// - an answered write is durable (it survives `kill -9` of the daemon);
/// - uniqueness of usernames and emails holds across every writer, without regard to case (callers canonicalize);
/// - one user's contact writes, imports, exports and index loads complete in the order they were made;
/// - failures are `StorageFailure`s; details go to the backend's log, never stored values.
///
/// The data protocols speak of data only. Who pays for the work is bound once, by `acting(for:)`: every call made
/// through the view it answers is charged to that payer and connection in the backend's queue (`FairQueue`'s
/// budgets), so one user's flood is refused as `.busy` without degrading another's answers.
public protocol Storage: StorageMaintenance, StorageChangeFeed, AuditFeed {
    /// The backend's data, as one payer reaches it.
    associatedtype Acting: StorageCalls

    /// A view of this backend's data whose every call is charged to `charge` (the daemon's own chores pass
    /// `.daemon`). Cheap: a value that holds the backend and the charge, made per request and dropped after it.
    func acting(for charge: QueueCharge) -> Acting

    /// Whether an account holds this canonical username, when the backend knows it from memory right now; nil
    /// when only `isUsernameTaken` can tell. Never waits, never fails and charges nobody: it lets
    /// `users.check_username`, the hottest request of all, be answered in place with no completion to allocate.
    /// A backend without such a memory answers nil.
    func knownUsernameTaken(_ canonical: String) -> Bool?
}

/// Every data protocol at once: what `Storage.acting(for:)` answers.
public protocol StorageCalls: AccountStorage, AccountLifeStorage, AdminStorage, SessionTokenStorage,
    LoginFailureStorage, ContactStorage, AuditStorage, BackupStorage, MailStorage, PasskeyStorage, AppPasswordStorage {}

/// One kind of a backend's data, bound per call to whoever pays for it: what a part of the server that needs
/// only that kind holds instead of the whole `Storage` (the account procedures reach no contacts).
public struct BoundStorage<Data> {
    private let bind: (QueueCharge) -> Data

    /// `bind` is `{ storage.acting(for: $0) }`, seen as the kind this holder needs.
    public init(_ bind: @escaping (QueueCharge) -> Data) {
        self.bind = bind
    }

    /// The data, every call made through it charged to `charge` (see `Storage.acting(for:)`).
    public func acting(for charge: QueueCharge) -> Data { bind(charge) }
}
