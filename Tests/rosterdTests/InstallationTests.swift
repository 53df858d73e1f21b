import Glibc
import Testing

/// What `make install` lays down is valid for systemd, and the shipped config is the defaults.
@Suite("Installation files", .serialized)
struct InstallationTests {
    /// The repository root, from this file's path.
    static let repository: String = {
        let parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        return parts.dropLast(3).joined(separator: "/")
    }()

    @Test(.enabled(if: access("/usr/bin/systemd-analyze", X_OK) == 0, "needs systemd-analyze"))
    func unitsVerifyScoreAtMostTwoAndTheSnippetsWork() throws {
        let directory = try TemporaryDirectory()
        let result = try capture(["/bin/sh", "-c", "cd \(Self.repository) && sh tools/check-ops.sh"], in: directory)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("ok: systemd-analyze security: exposure"))
    }

    @Test func theShippedConfigParsesAsTheDefaults() throws {
        let directory = try TemporaryDirectory()
        let shipped = try capture([TestDaemon.binary, "--config", Self.repository + "/conf/rosterd.conf", "--check-config"],
                                  in: directory)
        #expect(shipped.status == 0, "\(shipped.stderr)")
        #expect(shipped.stdout.contains("preset seed"))
        // Every key, uncommented at its documented default, must be accepted too.
        let text = try readFile(Self.repository + "/conf/rosterd.conf")
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            line.hasPrefix("#") && line.dropFirst().first?.isUppercase == true && line.contains("=") ? line.dropFirst() : line
        }.joined(separator: "\n")
        #expect(uncommented.contains("\nDebounceMs=500"))
        try writeFile(directory.path + "/all.conf", uncommented)
        let all = try capture([TestDaemon.binary, "--config", directory.path + "/all.conf", "--check-config"], in: directory)
        #expect(all.status == 0, "\(all.stderr)")
    }

    @Test func makeInstallLaysOutEveryFile() throws {
        let directory = try TemporaryDirectory()
        let buildDirectory = String(TestDaemon.binary.dropLast("/rosterd".count))
        let result = try capture(["/usr/bin/make", "-s", "-C", Self.repository, "install-only", "DESTDIR=\(directory.path)",
                                  "PREFIX=/usr/local", "BUILDDIR=\(buildDirectory)"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        for file in ["/usr/local/bin/rosterd", "/usr/local/bin/rosterctl", "/usr/local/lib/systemd/system/rosterd.service",
                     "/usr/local/lib/systemd/system/rosterd.socket", "/usr/local/lib/systemd/user/rosterd.service",
                     "/usr/local/lib/sysusers.d/roster.conf", "/usr/local/lib/tmpfiles.d/roster.conf",
                     "/etc/roster/rosterd.conf", "/usr/local/share/man/man8/rosterd.8", "/usr/local/share/man/man1/rosterctl.1",
                     "/usr/local/share/man/man5/rosterd.conf.5", "/usr/local/share/bash-completion/completions/rosterctl",
                     "/usr/local/lib/systemd/system/roster-web.service", "/usr/local/lib/roster/python/roster/web/app.py",
                     "/usr/local/lib/roster/python/roster/web/static/roster.js"] {
            #expect(access(directory.path + file, F_OK) == 0, "\(file) missing")
        }
        let unit = try readFile(directory.path + "/usr/local/lib/systemd/system/rosterd.service")
        #expect(unit.contains("ExecStart=/usr/local/bin/rosterd"))
        let web = try readFile(directory.path + "/usr/local/lib/systemd/system/roster-web.service")
        #expect(web.contains("Environment=PYTHONPATH=/usr/local/lib/roster/python"))
    }
}
