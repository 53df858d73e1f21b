import Glibc
import Testing
import RosterHostIO

@Suite("Whole text files")
struct TextFileTests {
    @Test func writeThenReadRoundTripsAndMissingFilesAreNil() {
        let path = "/tmp/roster-textfile-\(getpid()).txt"
        defer { unlink(path) }
        #expect(TextFile.write(path, "第一行\nsecond line\n"))
        #expect(TextFile.read(path) == "第一行\nsecond line\n")
        #expect(TextFile.read(path + ".missing") == nil)
        #expect(TextFile.read("/dev/null") == "")
    }
}
