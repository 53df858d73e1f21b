import Foundation
import RosterCore
import RosterRuntime
import RosterStorageTesting

/// A fresh directory for one backend's files, removed when the last reference goes away, with the log its
/// backend writes to (kept in memory: a failure the test provokes is not noise on stderr).
final class TemporaryDirectory {
    let url: URL
    let log = KeptLog()

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("roster-contract-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }
}
