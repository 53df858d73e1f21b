import Glibc
import Testing
import RosterHostIO

@Suite("Process environment")
struct ProcessEnvironmentTests {
    @Test func readsWhatTheProcessWasGivenAndSplitsAtTheFirstEquals() {
        let name = "ROSTER_ENVIRONMENT_TEST_\(getpid())"
        setenv(name, "a=b==c", 1)
        defer { unsetenv(name) }
        let environment = ProcessEnvironment.current
        #expect(environment[name] == "a=b==c")
        #expect(environment["PATH"].map { String(cString: getenv("PATH")) == $0 } ?? (getenv("PATH") == nil))
        unsetenv(name)
        #expect(ProcessEnvironment.current[name] == nil)
    }
}
