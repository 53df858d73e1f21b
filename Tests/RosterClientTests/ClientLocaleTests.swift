import RosterClient
import Testing

/// The locale a client asks for, from the POSIX variables, by the daemon's own rule.
@Suite("The client's locale")
struct ClientLocaleTests {
    @Test func aTagMapsOnItsLanguageAndTraditionalChineseIsRefused() {
        #expect(ClientLocale.map("zh_CN.UTF-8") == "zh-Hans")
        #expect(ClientLocale.map("zh-Hans") == "zh-Hans")
        #expect(ClientLocale.map("zh_TW.UTF-8") == nil)
        #expect(ClientLocale.map("zh-Hant-HK") == nil)
        #expect(ClientLocale.map("en-US") == "en")
        #expect(ClientLocale.map("vi_VN@latin") == "vi")
        #expect(ClientLocale.map("ko") == "ko")
        #expect(ClientLocale.map("fr_FR.UTF-8") == nil)
        #expect(ClientLocale.map("") == nil)
    }

    @Test func theFirstSetVariableWinsAndAnythingElseIsEnglish() {
        #expect(ClientLocale.fromEnvironment(["LC_ALL": "ko_KR.UTF-8", "LC_MESSAGES": "vi_VN", "LANG": "zh_CN"]) == "ko")
        #expect(ClientLocale.fromEnvironment(["LC_ALL": "", "LC_MESSAGES": "vi_VN", "LANG": "zh_CN"]) == "vi")
        #expect(ClientLocale.fromEnvironment(["LANG": "zh_CN.UTF-8"]) == "zh-Hans")
        #expect(ClientLocale.fromEnvironment(["LANG": "C"]) == "en")
        #expect(ClientLocale.fromEnvironment(["LANG": "fr_FR"]) == "en")
        #expect(ClientLocale.fromEnvironment([:]) == "en")
    }
}
