import RosterCore
import RosterPostgres
import RosterRuntime
import RosterStorage
@testable import RosterSQLite
import Testing

/// The ends the copy tests move data between: a backend on an SQLite file or a PostgreSQL database, each on a
/// loop of its own, and one copy between two `CopySource`/`CopyTarget` ends.
enum CopyEnds {
    static func sqlite(_ path: String, _ directory: TemporaryDirectory, clock: ManualWallClock) throws -> Backend {
        let loop = try EventLoop(signals: [])
        let storage = try SQLiteStorage.open(path: path, loop: loop, settings: ServerSettings(storageWorkers: 2), cores: 2,
                                             clock: clock, logger: Logger(level: .info, sink: directory.log))
        return try Backend(storage: storage, clock: clock, loop: loop, keeping: directory) { storage }
    }

    static func postgres(_ conninfo: String, clock: ManualWallClock) throws -> Backend {
        let loop = try EventLoop(signals: [])
        let storage = try PostgreSQLStorage.open(settings: PostgreSQLSettings(conninfo: conninfo, connections: 1), loop: loop,
                                                 server: ServerSettings(), cores: 2, clock: clock, logger: Logger(level: .err))
        return try Backend(storage: storage, clock: clock, loop: loop) { storage }
    }

    /// Every row of `source` into the empty `target`, two a batch, so that rows cross batch boundaries.
    static func copy(_ source: CopySource, _ target: CopyTarget) throws {
        #expect(try target.counts() == CopyCounts())
        try source.readAll(batchSize: 2) { batch throws(CopyError) in try target.write(batch) }
        try target.finish()
        #expect(try target.counts() == source.counts())
    }
}
