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

    @Test func theHostNameIsTheKernelsNodeName() {
        var names = utsname()
        #expect(uname(&names) == 0)
        let node = withUnsafeBytes(of: names.nodename) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        #expect(!ProcessEnvironment.hostName.isEmpty)
        #expect(ProcessEnvironment.hostName == node)
    }
}
