import RosterClient
import Testing
@testable import rosterctl

@Suite("rosterctl output and options")
struct OutputTests {
    @Test func tablesAlignByTerminalWidthAndDropTheLegend() {
        var table = Table(columns: ["NAME", "NOTE"])
        table.rows = [["张三", "x"], ["bob", "y"]]
        #expect(table.render(legend: true) == ["NAME NOTE", "张三 x", "bob  y"])
        #expect(table.render(legend: false) == ["张三 x", "bob  y"])
    }

    @Test func colourOnlyWhereAllowed() {
        let plain = Style.none
        #expect(plain.paint("ok", .colour(.green)) == "ok")
        let noColour = Style(attributes: true, colour: false)
        #expect(noColour.paint("ok", .colour(.green)) == "ok")
        #expect(noColour.paint("ok", .dim) == "\u{1B}[2mok\u{1B}[0m")
        #expect(Style(attributes: true, colour: true).paint("ok", .colour(.red)) == "\u{1B}[31mok\u{1B}[0m")
        // Piped output (not a terminal) never gets escapes, whatever the environment says.
        #expect(Style.forOutput(-1, environment: ["TERM": "xterm"]) == Style.none)
    }

    @Test func localesComeFromThePosixVariablesInOrder() {
        #expect(ClientLocale.fromEnvironment(["LANG": "zh_CN.UTF-8"]) == "zh-Hans")
        #expect(ClientLocale.fromEnvironment(["LC_ALL": "ko_KR.UTF-8", "LANG": "vi_VN"]) == "ko")
        #expect(ClientLocale.fromEnvironment(["LC_MESSAGES": "vi_VN.UTF-8", "LANG": "en_US"]) == "vi")
        #expect(ClientLocale.fromEnvironment(["LC_ALL": "", "LANG": "en_GB.UTF-8"]) == "en")
        #expect(ClientLocale.fromEnvironment(["LANG": "C.UTF-8"]) == "en")
        #expect(ClientLocale.fromEnvironment([:]) == "en")
        #expect(ClientLocale.map("zh_TW.UTF-8") == nil)
        #expect(ClientLocale.map("zh-Hans-CN") == "zh-Hans")
    }

    @Test func globalOptionsMayFollowTheVerb() throws {
        let (options, words) = try parseCommandLine(["register", "--username", "x", "--json=pretty", "--no-legend", "--locale", "ko"])
        #expect(words == ["register", "--username", "x"])
        #expect(options.json == .pretty)
        #expect(options.noLegend)
        #expect(options.locale == "ko")
        #expect(throws: UsageError.self) { try parseCommandLine(["--locale", "fr", "status"]) }
    }

    @Test func verbsParseTheirOwnArguments() throws {
        let user = try UserVerb(arguments: ["add", "alice1", "--email=a@example.com", "--password-stdin"])
        #expect(user.command == .add("alice1", email: "a@example.com", passwordStdin: true))
        #expect(throws: UsageError.self) { try UserVerb(arguments: ["remove", "alice1"]) }
        #expect(throws: UsageError.self) { try UserVerb(arguments: ["add", "alice1", "--password", "x"]) }
        #expect(throws: UsageError.self) { try CheckUsernameVerb(arguments: []) }
        #expect(throws: UsageError.self) { try WhoamiVerb(arguments: ["extra"]) }
        let register = try RegisterVerb(arguments: ["--username", "bob123", "--password-stdin"])
        #expect(register.username == "bob123")
        #expect(try WatchVerb(arguments: ["register", "login"]).forms == ["register", "login"])
    }

    @Test func everyVerbIsInTheTableOnceAndInTheHelp() {
        let names = verbTable.map { $0.configuration.name }
        #expect(Set(names).count == names.count)
        let help = helpText()
        for name in names { #expect(help.contains("  \(name)")) }
    }

    @Test func uptimeReadsLikeSystemctl() {
        #expect(formatUptime(850) == "850ms")
        #expect(formatUptime(61_000) == "1min 1s")
        #expect(formatUptime(3_600_000) == "1h")
        #expect(formatUptime(90_061_000) == "1d 1h 1min 1s")
    }
}
