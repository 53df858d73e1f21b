import Glibc
import RosterProtocol
import Testing

/// A full disk refuses writes with `storage_full`, acknowledges nothing it did not store, keeps the
/// daemon up, and serves writes again once there is room. A small tmpfs is the full disk, so this needs root.
@Suite("A full disk", .serialized, .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
struct FullDiskTests {
    @Test func writesAnswerStorageFullAndResumeWhenThereIsRoom() throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.path + "/state"
        #expect(mkdir(mountPoint, 0o700) == 0)
        #expect(run(["/bin/mount", "-t", "tmpfs", "-o", "size=640k", "tmpfs", mountPoint]) == 0)
        defer { run(["/bin/umount", "-l", mountPoint]) }
        let daemon = try TestDaemon(directory: directory)
        defer { daemon.stop() }
        let client = try daemon.connect()
        _ = try client.call("users.register", ["username": "full01", "password": "secret1"])
        _ = try client.call("auth.login", ["username": "full01", "password": "secret1"])

        var acknowledged = 0
        var refusal: JSONValue?
        for index in 0..<400 {
            let answer = try client.call("contacts.add", ["name": .string("Filler \(index)"),
                                                          "note": .string(String(repeating: "x", count: 3_900))])
            if answer["result"] != nil {
                acknowledged += 1
            } else {
                refusal = answer
                break
            }
        }
        #expect(refusal?["error"]?["code"] == 1040)
        #expect(refusal?["error"]?["data"]?["reason"] == "storage_full")
        #expect(try client.call("contacts.list", ["limit": 1])["result"]?["total"]?.int64Value == Int64(acknowledged))
        // A smaller write may still fit in what is left; either way it is answered truthfully.
        let small = try client.call("users.register", ["username": "full02", "password": "secret1"])
        #expect(small["result"] != nil || small["error"]?["data"]?["reason"] == "storage_full")
        #expect(daemon.poll() == nil)

        #expect(run(["/bin/mount", "-o", "remount,size=4m", mountPoint]) == 0)
        #expect(try client.call("users.register", ["username": "full03", "password": "secret1"])["result"] != nil)
        #expect(try client.call("contacts.add", ["name": "After room"])["result"] != nil)
        #expect(try client.call("contacts.list", ["limit": 1])["result"]?["total"]?.int64Value == Int64(acknowledged + 1))
    }
}
