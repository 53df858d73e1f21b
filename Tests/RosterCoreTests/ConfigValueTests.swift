import Testing
@testable import RosterCore

@Suite("ConfigValue")
struct ConfigValueTests {
    @Test(arguments: ["1", "yes", "y", "true", "t", "on", "YES", "True", "On", "Y", "T"])
    func trueSpellings(text: String) { #expect(ConfigValue.boolean(text) == true) }

    @Test(arguments: ["0", "no", "n", "false", "f", "off", "NO", "False", "OFF", "N", "F"])
    func falseSpellings(text: String) { #expect(ConfigValue.boolean(text) == false) }

    @Test(arguments: ["", "2", "maybe", "enable", "yess", " yes"])
    func notBooleans(text: String) { #expect(ConfigValue.boolean(text) == nil) }

    @Test func wholeNumbers() throws {
        #expect(try ConfigValue.wholeNumber("0") == 0)
        #expect(try ConfigValue.wholeNumber("007") == 7)
        #expect(throws: ConfigValueFailure.malformed) { try ConfigValue.wholeNumber("-1") }
        #expect(throws: ConfigValueFailure.malformed) { try ConfigValue.wholeNumber("+1") }
        #expect(throws: ConfigValueFailure.malformed) { try ConfigValue.wholeNumber("1.5") }
        #expect(throws: ConfigValueFailure.malformed) { try ConfigValue.wholeNumber("") }
        #expect(throws: ConfigValueFailure.malformed) { try ConfigValue.wholeNumber("0x10") }
        #expect(throws: ConfigValueFailure.overflow) { try ConfigValue.wholeNumber("99999999999999999999") }
    }

    @Test(arguments: [
        ("300", Duration.seconds(300)),
        ("5min", .seconds(300)),
        ("300s", .seconds(300)),
        ("300 sec", .seconds(300)),
        ("1h 30min", .seconds(5400)),
        ("1h30min", .seconds(5400)),
        ("1hr 30m", .seconds(5400)),
        ("2d", .seconds(172_800)),
        ("1w", .seconds(604_800)),
        ("500ms", .milliseconds(500)),
        ("250us", .microseconds(250)),
        ("1.5h", .seconds(5400)),
        ("0.5", .milliseconds(500)),
        ("1min 30", .seconds(90)),
        ("  2 minutes  ", .seconds(120)),
        ("1 hour 1 second", .seconds(3601)),
        ("0", .zero),
    ])
    func timeSpans(text: String, expected: Duration) throws {
        #expect(try ConfigValue.timeSpan(text) == expected)
    }

    @Test func timeSpanDefaultUnit() throws {
        #expect(try ConfigValue.timeSpan("500", defaultUnit: "ms") == .milliseconds(500))
    }

    @Test(arguments: ["", "   ", "abc", "5 parsecs", "-5s", "1.s", ".", "5s x", "1,5h", "M5"])
    func malformedTimeSpans(text: String) {
        #expect(throws: ConfigValueFailure.malformed) { try ConfigValue.timeSpan(text) }
    }

    @Test func hugeTimeSpansOverflow() {
        #expect(throws: ConfigValueFailure.overflow) { try ConfigValue.timeSpan("9999999999999w") }
        #expect(throws: ConfigValueFailure.overflow) { try ConfigValue.timeSpan("99999999999999999999999") }
    }

    @Test(arguments: [
        ("65536", 65_536),
        ("64K", 65_536),
        ("64KiB", 65_536),
        ("8M", 8 << 20),
        ("1G", 1 << 30),
        ("1.5M", 1_572_864),
        ("1G 512M", (1 << 30) + (512 << 20)),
        ("100B", 100),
        ("1 K", 1024),
    ])
    func sizes(text: String, expected: Int) throws {
        #expect(try ConfigValue.size(text) == expected)
    }

    @Test(arguments: ["", "k", "64k", "8MB", "1Q", "-1", "big"])
    func malformedSizes(text: String) {
        #expect(throws: ConfigValueFailure.malformed) { try ConfigValue.size(text) }
    }

    @Test func hugeSizesOverflow() {
        #expect(throws: ConfigValueFailure.overflow) { try ConfigValue.size("99999999999T") }
    }

    @Test func formatting() {
        #expect(ConfigValue.format(.seconds(5400)) == "1h 30min")
        #expect(ConfigValue.format(.milliseconds(1500)) == "1s 500ms")
        #expect(ConfigValue.format(.seconds(7 * 86_400)) == "1w")
        #expect(ConfigValue.format(.zero) == "0")
        #expect(ConfigValue.formatSize(65_536) == "64K")
        #expect(ConfigValue.formatSize(32 << 20) == "32M")
        #expect(ConfigValue.formatSize(1 << 30) == "1G")
        #expect(ConfigValue.formatSize(1000) == "1000")
    }

    @Test func logLevels() {
        #expect(LogLevel.allCases.map(\.rawValue) == Array(0...7))
        #expect(LogLevel.allCases.map(\.name) == ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"])
        for level in LogLevel.allCases {
            #expect(LogLevel(parsing: level.name) == level)
            #expect(LogLevel(parsing: level.name.uppercased()) == level)
            #expect(LogLevel(parsing: String(level.rawValue)) == level)
        }
        #expect(LogLevel(parsing: "8") == nil)
        #expect(LogLevel(parsing: "warn") == nil)
        #expect(LogLevel(parsing: "07") == nil)
        #expect(LogLevel.err < LogLevel.debug)
        #expect("\(LogLevel.warning)" == "warning")
    }
}
