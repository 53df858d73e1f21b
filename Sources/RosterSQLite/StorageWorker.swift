/// What one storage worker thread owns: its own SQLite connection, opened on first use so that a failure reads
/// as a job's error, not a dead thread. Every worker shares one `writeTurn`: each write transaction runs in it.
struct StorageWorker {
    let databasePath: String
    let writeTurn: WriteTurn
    /// `PRAGMA max_page_count` for every connection, when a test plays a full disk.
    let pageLimit: Int?
    private var opened: Database?

    init(databasePath: String, writeTurn: WriteTurn, pageLimit: Int?) {
        self.databasePath = databasePath
        self.writeTurn = writeTurn
        self.pageLimit = pageLimit
    }

    mutating func database() throws(StoreError) -> Database {
        if let opened { return opened }
        let database = try Database(path: databasePath)
        if let pageLimit { try database.execute("PRAGMA max_page_count = \(pageLimit)") }
        opened = database
        return database
    }
}
