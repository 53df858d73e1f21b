import Testing
import RosterCore

@Suite("ConfigPaths")
struct ConfigPathsTests {
    @Test func defaultDirectoriesLowestPriorityFirst() {
        #expect(ConfigPaths.mainFile == "/etc/roster/rosterd.conf")
        #expect(ConfigPaths.dropInDirectories == [
            "/usr/lib/roster/rosterd.conf.d",
            "/usr/local/lib/roster/rosterd.conf.d",
            "/run/roster/rosterd.conf.d",
            "/etc/roster/rosterd.conf.d",
        ])
    }

    @Test func sortedByNameAcrossDirectoriesWithMasking() {
        let order = ConfigPaths.catConfigOrder(
            mainFile: "/etc/roster/rosterd.conf",
            dropIns: [
                (directory: "/usr/lib/roster/rosterd.conf.d", fileNames: ["50-vendor.conf", "10-base.conf", "90-late.conf"]),
                (directory: "/run/roster/rosterd.conf.d", fileNames: ["50-vendor.conf", "20-runtime.conf"]),
                (directory: "/etc/roster/rosterd.conf.d", fileNames: ["90-late.conf", "15-admin.conf"]),
            ])
        #expect(order == [
            "/etc/roster/rosterd.conf",
            "/usr/lib/roster/rosterd.conf.d/10-base.conf",
            "/etc/roster/rosterd.conf.d/15-admin.conf",
            "/run/roster/rosterd.conf.d/20-runtime.conf",
            "/run/roster/rosterd.conf.d/50-vendor.conf",
            "/etc/roster/rosterd.conf.d/90-late.conf",
        ])
    }

    @Test func etcMasksRunMasksUsrLib() {
        let dirs = ConfigPaths.dropInDirectories
        let all = ConfigPaths.catConfigOrder(mainFile: nil, dropIns: dirs.map { (directory: $0, fileNames: ["x.conf"]) })
        #expect(all == ["/etc/roster/rosterd.conf.d/x.conf"])
        let noEtc = ConfigPaths.catConfigOrder(mainFile: nil,
                                               dropIns: dirs.dropLast().map { (directory: $0, fileNames: ["x.conf"]) })
        #expect(noEtc == ["/run/roster/rosterd.conf.d/x.conf"])
    }

    @Test func onlyVisibleConfFilesCount() {
        let order = ConfigPaths.catConfigOrder(
            mainFile: nil,
            dropIns: [(directory: "/etc/roster/rosterd.conf.d/",
                       fileNames: ["a.conf", "b.conf~", "c.conf.rpmnew", ".hidden.conf", ".conf", "d.txt", "e.CONF",
                                   "sub/f.conf", "a.conf"])])
        #expect(order == ["/etc/roster/rosterd.conf.d/a.conf"])
    }

    @Test func byteOrderNotLocaleOrder() {
        let order = ConfigPaths.catConfigOrder(
            mainFile: nil,
            dropIns: [(directory: "/d", fileNames: ["b.conf", "B.conf", "a.conf", "10.conf", "9.conf", "é.conf", "z.conf"])])
        #expect(order == ["/d/10.conf", "/d/9.conf", "/d/B.conf", "/d/a.conf", "/d/b.conf", "/d/z.conf", "/d/é.conf"])
    }

    @Test func missingMainFileAndNoDropIns() {
        #expect(ConfigPaths.catConfigOrder(mainFile: nil, dropIns: []) == [])
        #expect(ConfigPaths.catConfigOrder(mainFile: "/etc/roster/rosterd.conf", dropIns: []) == ["/etc/roster/rosterd.conf"])
    }

    @Test func explicitConfigFileUsesItsOwnDropInDirectory() {
        #expect(ConfigPaths.dropInDirectory(forConfigFile: "/tmp/t/rosterd.conf") == "/tmp/t/rosterd.conf.d")
        #expect(ConfigPaths.explicitConfigOrder(configFile: "/tmp/t/my.conf",
                                                dropInFileNames: ["20-b.conf", "10-a.conf", "notes.md"])
                == ["/tmp/t/my.conf", "/tmp/t/my.conf.d/10-a.conf", "/tmp/t/my.conf.d/20-b.conf"])
    }
}
