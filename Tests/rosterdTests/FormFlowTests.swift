import Glibc
import RosterProtocol
import Testing

/// protocol.md §Register form and §Log-in form over the real socket, with the seeds' own messages.
@Suite("Register and log-in forms against the real rosterd", .serialized)
struct FormFlowTests {
    private func greeted(_ daemon: TestDaemon, locale: String) throws -> TestClient {
        let client = try daemon.connect()
        _ = try client.call("session.hello", ["locale": .string(locale), "timing": ["debounce_ms": 0]])
        return client
    }

    private func input(_ client: TestClient, _ form: String, _ field: String, _ value: String) throws -> JSONValue {
        try client.call("form.input", ["form": .string(form), "field": .string(field), "value": .string(value)])
    }

    @Test func theSeedRegisterFlowInChinese() throws {
        let daemon = try TestDaemon()
        let client = try greeted(daemon, locale: "zh-Hans")
        let opened = try client.call("form.open", ["form": "register"])["result"]
        #expect(opened?["submittable"] == false)
        #expect(opened?["fields"]?.arrayValue?.map { $0["name"] ?? .null } == ["username", "password", "confirm", "email"])
        #expect(opened?["fields"]?.arrayValue?.map { $0["enabled"] ?? .null } == [true, false, false, true])

        #expect(try input(client, "register", "username", "ali")["result"] == ["rev": 1])
        let short = try client.waitForField("username", state: "invalid")
        #expect(short["code"] == "too_short")
        #expect(short["message"] == "用户名长度至少为6位")
        #expect(short["rev"] == 1)

        _ = try input(client, "register", "username", "ali@#1")
        #expect(try client.waitForField("username", state: "invalid")["code"] == "forbidden_characters")

        _ = try input(client, "register", "username", "alice1")
        let validating = try client.waitForField("username", state: "validating")
        #expect(validating["message"] == "校验中…")
        let available = try client.waitForField("username", state: "valid")
        #expect(available["message"] == "用户名可用")
        #expect(available["rev"] == 3)
        let enabled = try client.waitForEvent { $0["field"] == "password" && $0["enabled"] == true }
        #expect(enabled["rev"] == 0)

        let disabled = try input(client, "register", "confirm", "secret1")
        #expect(disabled["error"]?["code"] == 1001)
        #expect(disabled["error"]?["data"]?["reason"] == "field_disabled")

        _ = try input(client, "register", "password", "abc")
        #expect(try client.waitForField("password", state: "invalid")["message"] == "密码长度至少为6位")
        _ = try input(client, "register", "password", "secret1")
        #expect(try client.waitForField("password", state: "valid")["message"] == "密码可用")

        _ = try input(client, "register", "confirm", "secret2")
        #expect(try client.waitForField("confirm", state: "invalid")["message"] == "两次密码不一样")
        let notYet = try client.call("form.submit", ["form": "register"])
        #expect(notYet["error"]?["data"]?["reason"] == "not_submittable")
        let failed = try client.waitForEvent { $0["type"] == "submit" && $0["state"] == "failed" }
        #expect(failed["code"] == "not_submittable")

        _ = try input(client, "register", "confirm", "secret1")
        _ = try client.waitForField("confirm", state: "valid")
        #expect(try client.waitForEvent { $0["type"] == "form" }["submittable"] == true)

        let submitted = try client.call("form.submit", ["form": "register"])
        #expect(submitted["result"]?["username"] == "alice1")
        #expect(submitted["result"]?["token"]?.stringValue?.count == 43)
        #expect(try client.waitForEvent { $0["type"] == "session" }["user"] == "alice1")
        let succeeded = try client.waitForEvent { $0["type"] == "submit" && $0["state"] == "succeeded" }
        #expect(succeeded["message"] == "注册成功")
        #expect(try client.call("session.whoami")["result"] == ["user": ["username": "alice1"]])
        #expect(!daemon.stderr.contains("secret1"))
    }

    /// A registration is logged once, whichever way it came.
    @Test func everyRegistrationIsLoggedOnceWhicheverWayItCame() throws {
        let daemon = try TestDaemon()
        let client = try greeted(daemon, locale: "en")
        _ = try client.call("users.register", ["username": "carol1", "password": "secret1"])
        _ = try client.call("form.open", ["form": "register"])
        _ = try input(client, "register", "username", "dave12")
        _ = try client.waitForField("username", state: "valid")
        _ = try input(client, "register", "password", "secret1")
        _ = try client.waitForField("password", state: "valid")
        _ = try input(client, "register", "confirm", "secret1")
        _ = try client.waitForField("confirm", state: "valid")
        #expect(try client.call("form.submit", ["form": "register"])["result"]?["username"] == "dave12")
        for name in ["carol1", "dave12"] {
            let line = "registered roster_user=\(name) roster_peer_uid=\(getuid())"
            #expect(daemon.waitForLog(line), "\(daemon.stderr)")
            #expect(daemon.stderr.components(separatedBy: line).count == 2, "\(daemon.stderr)")
        }
    }

    @Test func theSeedLogInFlowInEnglish() throws {
        let daemon = try TestDaemon()
        let setup = try daemon.connect()
        #expect(try setup.call("users.register", ["username": "bobby1", "password": "hunter22", "email": "Bob@Example.com"])["result"]
                == ["username": "bobby1"])
        let client = try greeted(daemon, locale: "en")
        _ = try client.call("form.open", ["form": "login"])
        _ = try input(client, "login", "username", "nobody1")
        #expect(try client.waitForField("username", state: "invalid")["code"] == "not_found")
        _ = try input(client, "login", "password", "hunter22")
        _ = try client.waitForField("password", state: "valid")
        let unknown = try client.call("form.submit", ["form": "login"])
        #expect(unknown["error"]?["data"]?["reason"] == "not_found")
        #expect(try client.waitForEvent { $0["type"] == "submit" && $0["state"] == "failed" }["code"] == "not_found")

        _ = try input(client, "login", "username", "BOB@example.com")
        #expect(try client.waitForField("username", state: "valid")["code"] == "available")
        _ = try input(client, "login", "password", "hunter23")
        _ = try client.waitForField("password", state: "valid")
        let wrong = try client.call("form.submit", ["form": "login"])
        #expect(wrong["error"]?["data"]?["reason"] == "wrong_password")
        #expect(wrong["error"]?["message"] == "Wrong password")
        #expect(try client.waitForEvent { $0["type"] == "submit" && $0["state"] == "failed" }["code"] == "wrong_password")

        _ = try input(client, "login", "password", "hunter22")
        _ = try client.waitForField("password", state: "valid")
        let right = try client.call("form.submit", ["form": "login"])
        #expect(right["result"]?["username"] == "bobby1")
        #expect(try client.waitForEvent { $0["type"] == "session" }["user"] == "bobby1")
        #expect(try client.call("session.whoami")["result"] == ["user": ["username": "bobby1", "email": "bob@example.com"]])
    }

    @Test func aRegistrationElsewhereTurnsAnOpenFormTaken() throws {
        let daemon = try TestDaemon()
        let watcher = try greeted(daemon, locale: "en")
        _ = try watcher.call("form.open", ["form": "register"])
        _ = try input(watcher, "register", "username", "carol1")
        _ = try watcher.waitForField("username", state: "valid")
        #expect(try watcher.waitForEvent { $0["field"] == "password" }["enabled"] == true)
        let other = try daemon.connect()
        #expect(try other.call("users.register", ["username": "Carol1", "password": "secret1"])["result"] == ["username": "carol1"])
        let taken = try watcher.waitForField("username", state: "invalid")
        #expect(taken["code"] == "taken")
        #expect(taken["rev"] == 1)
        #expect(try watcher.waitForEvent { $0["field"] == "password" }["enabled"] == false)
    }

    @Test func formMistakesAreNamed() throws {
        let daemon = try TestDaemon()
        let client = try greeted(daemon, locale: "en")
        #expect(try client.call("form.input", ["form": "register", "field": "username", "value": "x"])["error"]?["data"]?["reason"]
                == "form_not_open")
        #expect(try client.call("form.open", ["form": "profile"])["error"]?["data"]?["reason"] == "unknown_form")
        _ = try client.call("form.open", ["form": "register"])
        #expect(try client.call("form.input", ["form": "register", "field": "age", "value": "3"])["error"]?["data"]?["reason"]
                == "unknown_field")
        #expect(try client.call("form.close", ["form": "register"])["result"] == [:])
        #expect(try client.call("form.submit", ["form": "register"])["error"]?["code"] == 1002)
    }

    @Test func usersRegisterAppliesTheFormRules() throws {
        let daemon = try TestDaemon()
        let client = try greeted(daemon, locale: "zh-Hans")
        let short = try client.call("users.register", ["username": "abc", "password": "secret1"])
        #expect(short["error"]?["code"] == 1005)
        #expect(short["error"]?["data"] == ["reason": "too_short", "field": "username"])
        #expect(short["error"]?["message"] == "用户名长度至少为6位")
        let badEmail = try client.call("users.register", ["username": "dave12", "password": "secret1", "email": "dave@"])
        #expect(badEmail["error"]?["data"]?["reason"] == "invalid_email")
        #expect(try client.call("users.register", ["username": "dave12", "password": "secret1", "email": "d@x.io"])["result"] != nil)
        let again = try client.call("users.register", ["username": "DAVE12", "password": "secret1"])
        #expect(again["error"]?["code"] == 1010)
        #expect(again["error"]?["data"] == ["reason": "taken", "field": "username"])
        #expect(again["error"]?["message"] == "用户名已存在")
        let sameEmail = try client.call("users.register", ["username": "erin12", "password": "secret1", "email": "D@X.io"])
        #expect(sameEmail["error"]?["data"] == ["reason": "taken", "field": "email"])
        let check = try client.call("users.check_username", ["username": "dave12"])["result"]
        #expect(check == ["state": "invalid", "code": "taken", "message": "用户名已存在"])
        #expect(try client.call("users.check_username", ["username": "frank1"])["result"]?["code"] == "available")
    }

    @Test func aTokenResumesUntilLogoutRevokesIt() throws {
        let daemon = try TestDaemon()
        let first = try daemon.connect()
        _ = try first.call("users.register", ["username": "grace1", "password": "secret1"])
        let login = try first.call("auth.login", ["username": "grace1", "password": "secret1"])
        guard let token = login["result"]?["token"]?.stringValue else {
            Issue.record("no token: \(login)")
            return
        }
        let second = try daemon.connect()
        #expect(try second.call("session.resume", ["token": .string(token)])["result"] == ["username": "grace1"])
        #expect(try second.call("session.whoami")["result"]?["user"]?["username"] == "grace1")
        #expect(try first.call("session.logout")["result"] == [:])
        #expect(try first.call("session.whoami")["result"] == ["user": nil])
        let third = try daemon.connect()
        #expect(try third.call("session.resume", ["token": .string(token)])["error"]?["data"]?["reason"] == "not_found")
        #expect(try third.call("session.resume", ["token": "garbage"])["error"]?["data"]?["reason"] == "not_found")
    }

    @Test func pipelinedLogInAndLogOutTakeEffectInOrder() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        _ = try client.call("users.register", ["username": "olga12", "password": "secret1"])
        try client.send("{\"id\":1,\"method\":\"auth.login\",\"params\":{\"username\":\"olga12\",\"password\":\"secret1\"}}\n"
                        + "{\"id\":2,\"method\":\"session.logout\"}\n")
        var answered = Set<Int64>()
        while answered.count < 2 {
            let line = try client.readLine()
            if let id = line["id"]?.int64Value { answered.insert(id) }
        }
        #expect(try client.call("session.whoami")["result"] == ["user": nil])
    }

    @Test func failedLogInsAreLimitedEvenAfterARestart() throws {
        let config = "[Login]\nRateLimitBurst=3\nRateLimitIntervalSec=300\n"
        let daemon = try TestDaemon(config: config)
        let client = try greeted(daemon, locale: "en")
        _ = try client.call("users.register", ["username": "heidi1", "password": "secret1"])
        for _ in 0..<3 {
            #expect(try client.call("auth.login", ["username": "heidi1", "password": "wrong12"])["error"]?["data"]?["reason"]
                    == "wrong_password")
        }
        let limited = try client.call("auth.login", ["username": "heidi1", "password": "secret1"])
        #expect(limited["error"]?["code"] == 1023)
        let wait = limited["error"]?["data"]?["retry_after_ms"]?.int64Value ?? 0
        #expect(wait > 290_000 && wait <= 300_000)
        // Unknown names are limited like known ones.
        for _ in 0..<3 { _ = try client.call("auth.login", ["username": "nobody9", "password": "x"]) }
        #expect(try client.call("auth.login", ["username": "nobody9", "password": "x"])["error"]?["data"]?["reason"] == "rate_limited")

        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let restarted = try TestDaemon(directory: daemon.directory, config: config)
        let after = try restarted.connect().call("auth.login", ["username": "heidi1", "password": "secret1"])
        #expect(after["error"]?["data"]?["reason"] == "rate_limited")
    }

    @Test func theHardenedPresetAnswersOneGenericError() throws {
        let daemon = try TestDaemon(config: "[Validation]\nPreset=hardened\n")
        #expect(daemon.waitForLog("preset hardened"))
        let client = try greeted(daemon, locale: "en")
        let weak = try client.call("users.register", ["username": "ivan12", "password": "short pass"])
        #expect(weak["error"]?["data"] == ["reason": "too_short", "field": "password"])
        let dictionary = try client.call("users.register", ["username": "ivan12", "password": "password12345678"])
        #expect(dictionary["error"]?["data"] == ["reason": "dictionary_word", "field": "password"])
        let derived = try client.call("users.register", ["username": "ivan12", "password": "ivan12ivan12ivan12"])
        #expect(derived["error"]?["data"] == ["reason": "contains_username", "field": "password"])
        let strong = "correct horse battery staple ✓"
        #expect(try client.call("users.register", ["username": "ivan12", "password": .string(strong)])["result"] != nil)
        let unknown = try client.call("auth.login", ["username": "nobody1", "password": .string(strong)])
        let wrong = try client.call("auth.login", ["username": "ivan12", "password": "correct horse battery stapler"])
        #expect(unknown["error"]?["data"] == ["reason": "invalid_credentials"])
        #expect(wrong["error"]?["data"] == ["reason": "invalid_credentials"])
        #expect(unknown["error"]?["message"] == wrong["error"]?["message"])
        #expect(try client.call("auth.login", ["username": "ivan12", "password": .string(strong)])["result"]?["username"] == "ivan12")

        _ = try client.call("form.open", ["form": "login"])
        _ = try input(client, "login", "username", "nobody1")
        let verdict = try client.waitForEvent { $0["type"] == "field" && $0["field"] == "username" }
        #expect(verdict["state"] == "valid")
        #expect(verdict["code"] == "entered")
    }
}

@Suite("Password hashes over the daemon's life", .serialized)
struct PasswordHashLifeTests {
    private func databaseText(_ daemon: TestDaemon) -> String {
        ["", "-wal"].map { (try? readFile(daemon.databasePath + $0)) ?? "" }.joined()
    }

    @Test func aLogInUpgradesAHashMadeWithOlderParameters() throws {
        let cheap = try TestDaemon(config: "[Hashing]\nMemoryKiB=8192\nIterations=1\n")
        _ = try cheap.connect().call("users.register", ["username": "judy12", "password": "S3cret-plain-zz9"])
        #expect(databaseText(cheap).contains("$argon2id$v=19$m=8192,t=1,p=1$"))
        #expect(!databaseText(cheap).contains("S3cret-plain-zz9"))
        cheap.signal(SIGTERM)
        #expect(cheap.waitForExit() == 0)

        let current = try TestDaemon(directory: cheap.directory, config: "")
        #expect(try current.connect().call("auth.login", ["username": "judy12", "password": "S3cret-plain-zz9"])["result"] != nil)
        #expect(databaseText(current).contains("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(!current.stderr.contains("S3cret-plain-zz9"))
    }
}
