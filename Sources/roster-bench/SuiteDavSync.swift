import CLinux
import CRosterFloor
import Foundation
import Glibc

/// CardDAV sync of one book: roster-web in front of rosterd beside Radicale (Debian's `radicale`), each on
/// loopback, seeded with the same cards and synced by the same clients: Debian's vdirsyncer for the first full sync
/// (the whole process, start-up included), and tools/dav-phone-sync.py for what a phone does on each later sync
/// (PROPFIND getctag, REPORT sync-collection from its token, addressbook-multiget of what changed), driven over a
/// pipe and timed here, so that its Python start-up is in no figure. Nothing is pinned: two servers, a gateway
/// and a client share the host's cores.
extension Suite {
    func davSync() throws {
        let tools = try DavTools.locate()
        let book = DavBook(cards: options.davCards)
        notes.append("dav-sync: load average before: \(DavTools.loadAverage())")
        // The children inherit this process's pin: let every one of them use any core instead.
        if serverCPU != nil { _ = roster_allow_every_cpu(0) }
        defer { if serverCPU != nil { _ = roster_pin_to_cpu(0, Self.clientCPU) } }

        let radicale = try RadicaleServer(book: book, directory: workDir + "/radicale", tools: tools)
        defer { radicale.stop() }
        let (database, _) = try storage.database("dav")
        let daemon = try startRosterd(database: database, pinned: false)
        defer { daemon.stop() }
        let rosterAccount = try seedRoster(socketPath: daemon.socketPath, book: book)
        let gateway = try RosterWeb(socketPath: daemon.socketPath, workDir: workDir, tools: tools)
        defer { gateway.stop() }

        let servers = [
            DavServer(name: "radicale", root: radicale.url, book: radicale.url + "/\(RadicaleServer.username)/contacts/",
                      username: RadicaleServer.username, password: RadicaleServer.password),
            DavServer(name: "roster", root: gateway.url, book: gateway.url + "/dav/addressbooks/\(rosterAccount.username)/contacts/",
                      username: rosterAccount.username, password: rosterAccount.password),
        ]
        // One phone per server for the whole scenario; its first sync (untimed) also fills Radicale's item cache,
        // which Radicale builds on the first request that lists the book.
        var phones: [String: PhoneClient] = [:]
        defer { phones.values.forEach { $0.stop() } }
        for server in servers {
            let phone = try PhoneClient(server: server, tools: tools, stderrPath: workDir + "/phone-\(server.name).stderr")
            phones[server.name] = phone
            let answer = try phone.send("init")
            guard answer == "ok \(book.cards)" else { throw BenchError("dav-sync: \(server.name)'s book after seeding: \(answer)") }
        }

        var figures: [String: [String: [Double]]] = [:]
        func add(_ metric: String, _ server: String, _ value: Double) { figures[metric, default: [:]][server, default: []].append(value) }
        for run in 0..<options.runs {
            for server in servers {
                guard let phone = phones[server.name] else { continue }
                let sync = try Vdirsyncer(directory: workDir + "/vdirsyncer-\(server.name)-\(run)", server: server, tools: tools)
                try sync.run("discover")
                add("first", server.name, try sync.timedSync() / 1_000)
                let got = sync.localCards()
                guard got == book.cards else { throw BenchError("dav-sync: vdirsyncer got \(got) of \(book.cards) cards from \(server.name)") }

                let (quiet, unchanged) = try phone.timed("sync")
                guard unchanged == "ok 0 0" else { throw BenchError("dav-sync: \(server.name) reported a change where there was none: \(unchanged)") }
                add("quiet", server.name, quiet)
                var samples = Samples()
                for _ in 0..<options.davChanges {
                    let changed = try phone.send("change")
                    guard changed.hasPrefix("ok ") else { throw BenchError("dav-sync: changing a card on \(server.name): \(changed)") }
                    let (elapsed, answer) = try phone.timed("sync")
                    guard answer.hasPrefix("ok 1 ") else { throw BenchError("dav-sync: \(server.name)'s sync after one change: \(answer)") }
                    samples.add(elapsed)
                }
                add("phone p50", server.name, samples.percentile(50))
                add("phone max", server.name, samples.percentile(100))
                // vdirsyncer after one more change: its whole run, start-up and the listing of every etag included.
                let changed = try phone.send("change")
                guard changed.hasPrefix("ok ") else { throw BenchError("dav-sync: changing a card on \(server.name): \(changed)") }
                add("vdirsyncer incremental", server.name, try sync.timedSync())
                _ = try phone.send("sync")
            }
        }

        let scenario = "dav-sync (\(book.cards) cards)"
        func compare(_ metric: String, _ key: String, unit: String, target: String? = nil, met: ((Spread, Spread) -> Bool)? = nil) {
            let roster = Spread(figures[key]?["roster"] ?? [])
            let other = Spread(figures[key]?["radicale"] ?? [])
            self.figures.append(Figure(scenario: scenario, metric: metric, unit: unit, rosterd: roster, floor: other,
                                       ratio: other.median > 0 ? roster.median / other.median : nil, ratioOf: "of Radicale",
                                       target: target, met: met.map { $0(roster, other) }))
        }
        compare("first full sync, vdirsyncer (whole run)", "first", unit: "s", target: "≤ Radicale") { $0.median <= $1.median }
        compare("incremental, 1 change, phone-like p50", "phone p50", unit: "ms", target: "≤ 50 ms") { mine, _ in mine.median <= 50 }
        compare("incremental, 1 change, phone-like max", "phone max", unit: "ms")
        compare("nothing changed, phone-like (getctag only)", "quiet", unit: "ms")
        compare("incremental, 1 change, vdirsyncer (whole run)", "vdirsyncer incremental", unit: "ms")
        notes.append("dav-sync: the floor column is Debian's Radicale (multifilesystem storage, htpasswd plain) "
                     + "beside roster-web + rosterd (\(options.backend.rawValue)); same cards, same clients, nothing pinned")
        notes.append("dav-sync: phone-like = tools/dav-phone-sync.py on one kept-alive connection, timed from this process over "
                     + "a pipe (PROPFIND getctag, REPORT sync-collection, addressbook-multiget of the changed href), "
                     + "\(options.davChanges) changes per run, each made by a GET and an If-Match PUT outside the timing")
        notes.append("dav-sync: vdirsyncer (whole run) = `vdirsyncer sync` from spawn to exit, its Python start-up included; "
                     + "it lists every href and etag on each sync (it does not use sync-collection)")
        notes.append("dav-sync: load average after: \(DavTools.loadAverage())")
    }

    /// Registers a user, imports the book over the socket with contacts.import (vCard) and makes an app password.
    private func seedRoster(socketPath: String, book: DavBook) throws(BenchError) -> (username: String, password: String) {
        let fd = try UnixSocket.connect(socketPath)
        defer { close(fd) }
        let username = "davbench1"
        let registered = try RoundTrips.call(fd: fd, Requests.register(id: 1, username: username, password: Seeder.password))
        guard registered.contains("\"result\"") else { throw BenchError("dav-sync: registration failed: \(registered)") }
        let login = try RoundTrips.call(fd: fd, Requests.login(id: 2, username: username, password: Seeder.password))
        guard login.contains("\"result\"") else { throw BenchError("dav-sync: log-in failed: \(login)") }
        var first = 0
        while first < book.cards {
            let last = min(book.cards, first + 1_000)
            let data = (first..<last).map(book.card).joined()
            let answer = try RoundTrips.call(fd: fd, Requests.line(id: 3, method: "contacts.import",
                                                                   params: "{\"format\":\"vcard\",\"data\":\(Requests.jsonString(data))}"))
            guard answer.contains("\"added\":\(last - first)") else { throw BenchError("dav-sync: contacts.import: \(answer.prefix(400))") }
            first = last
        }
        let created = try RoundTrips.call(fd: fd, Requests.line(id: 4, method: "account.app_password_create", params: "{\"name\":\"bench\"}"))
        guard let object = try? JSONSerialization.jsonObject(with: Data(created.utf8)) as? [String: Any],
              let result = object["result"] as? [String: Any], let password = result["password"] as? String else {
            throw BenchError("dav-sync: account.app_password_create: \(created)")
        }
        return (username, password)
    }
}

/// The cards both servers hold: vCard 4.0, as a phone's export has them.
struct DavBook {
    let cards: Int

    func uid(_ number: Int) -> String { "dav-bench-" + String(format: "%05d", number) }

    func card(_ number: Int) -> String {
        let digits = String(format: "%05d", number)
        return "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:\(uid(number))\r\nFN:Person\(digits) Bench\r\nN:Bench;Person\(digits);;;\r\n"
            + "EMAIL;TYPE=home:person\(digits)@example.org\r\nTEL;TYPE=cell:+1 555 01\(digits)\r\n"
            + "NOTE:Seeded by roster-bench's dav-sync scenario\r\nEND:VCARD\r\n"
    }
}

/// One server's CardDAV addresses and credentials.
struct DavServer {
    let name: String
    /// Where discovery starts (no trailing slash).
    let root: String
    let book: String
    let username: String
    let password: String
}

/// Where the programs of the dav-sync scenario are: Debian's python3, vdirsyncer and radicale, and this checkout's
/// roster-web and tools/dav-phone-sync.py (found upwards of this binary).
struct DavTools {
    static let python = "/usr/bin/python3"
    static let vdirsyncer = "/usr/bin/vdirsyncer"
    let checkout: String

    var phoneScript: String { checkout + "/tools/dav-phone-sync.py" }

    static func locate() throws(BenchError) -> DavTools {
        for program in [python, vdirsyncer] where access(program, X_OK) != 0 {
            throw BenchError("dav-sync needs \(program): `make test-deps` installs it (Debian's vdirsyncer, radicale)")
        }
        guard access("/usr/lib/python3/dist-packages/radicale/__main__.py", R_OK) == 0 else {
            throw BenchError("dav-sync needs Debian's radicale: `make test-deps` installs it")
        }
        var directory = selfExecutable()
        while let slash = directory.lastIndex(of: "/"), slash != directory.startIndex {
            directory = String(directory[..<slash])
            if access(directory + "/tools/dav-phone-sync.py", R_OK) == 0,
               access(directory + "/clients/python/src/roster/web/__main__.py", R_OK) == 0 {
                return DavTools(checkout: directory)
            }
        }
        throw BenchError("dav-sync: no checkout with tools/dav-phone-sync.py and clients/python above \(selfExecutable())")
    }

    /// /proc/loadavg's three averages.
    static func loadAverage() -> String {
        ((try? readText("/proc/loadavg")) ?? "").split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// A child process with environment, optional stdin file and stdout file, stopped by SIGTERM then SIGKILL.
struct Child {
    let pid: pid_t

    init(_ argv: [String], environment: [String], stdin: String = "/dev/null", stdout: String = "/dev/null",
         stderr: String) throws(BenchError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        pid = try Child.spawn(argv, environment: environment, actions: &actions)
    }

    /// A child started elsewhere, to wait for or stop.
    init(pid: pid_t) { self.pid = pid }

    static func spawn(_ argv: [String], environment: [String], actions: inout posix_spawn_file_actions_t) throws(BenchError) -> pid_t {
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup($0) } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, argv[0], &actions, nil, cArgs, cEnv)
        guard result == 0 else { throw BenchError("posix_spawn \(argv[0]): \(String(cString: strerror(result)))") }
        return pid
    }

    /// Waits for the exit: its status, or 128 plus the signal's number.
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<1_000 {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || reaped < 0 { return }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}

/// Loopback TCP: a free port, and waiting until a server listens on one.
enum Loopback {
    static func freePort() throws(BenchError) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BenchError("no free loopback port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Until `port` accepts, the child is gone, or 60 s passed.
    static func waitUntilListening(port: Int, child: Child, name: String, log: String) throws(BenchError) {
        for _ in 0..<6_000 {
            if canConnect(port: port) { return }
            guard child.isRunning else {
                throw BenchError("\(name) exited at start: \((try? readText(log)).map { String($0.suffix(600)) } ?? log)")
            }
            usleep(10_000)
        }
        throw BenchError("\(name) did not listen on 127.0.0.1:\(port); see \(log)")
    }
}

/// Radicale on loopback with its storage written as its multifilesystem backend keeps it: the book is
/// collection-root/USER/contacts/ with `.Radicale.props` saying VADDRESSBOOK and one `UID.vcf` per card.
struct RadicaleServer {
    static let username = "bench"
    static let password = "bench-password"
    let url: String
    private let child: Child

    init(book: DavBook, directory: String, tools: DavTools) throws(BenchError) {
        let collection = directory + "/storage/collection-root/\(Self.username)/contacts"
        guard try runToCompletion(["/bin/mkdir", "-p", collection]) == 0 else { throw BenchError("cannot make \(collection)") }
        try writeText(collection + "/.Radicale.props", "{\"D:displayname\": \"contacts\", \"tag\": \"VADDRESSBOOK\"}")
        for number in 0..<book.cards { try writeText(collection + "/\(book.uid(number)).vcf", book.card(number)) }
        try writeText(directory + "/users", "\(Self.username):\(Self.password)\n")
        let port = try Loopback.freePort()
        try writeText(directory + "/config", """
            [server]
            hosts = 127.0.0.1:\(port)
            max_connections = 20
            [auth]
            type = htpasswd
            htpasswd_filename = \(directory)/users
            htpasswd_encryption = plain
            [rights]
            type = owner_only
            [storage]
            filesystem_folder = \(directory)/storage
            [web]
            type = none
            [logging]
            level = warning

            """)
        let log = directory + "/radicale.stderr"
        child = try Child([DavTools.python, "-m", "radicale", "--config", directory + "/config"],
                          environment: ["PATH=/usr/bin:/bin", "HOME=\(directory)"], stderr: log)
        url = "http://127.0.0.1:\(port)"
        do {
            try Loopback.waitUntilListening(port: port, child: child, name: "radicale", log: log)
        } catch {
            child.stop()
            throw error
        }
    }

    func stop() { child.stop() }
}

/// roster-web (`python3 -m roster.web` from this checkout, with Debian's python3) on a loopback port.
struct RosterWeb {
    let url: String
    private let child: Child

    init(socketPath: String, workDir: String, tools: DavTools) throws(BenchError) {
        let port = try Loopback.freePort()
        let log = workDir + "/roster-web.stderr"
        child = try Child([DavTools.python, "-m", "roster.web", "--listen", "127.0.0.1:\(port)", "--socket", socketPath],
                          environment: ["PATH=/usr/bin:/bin", "HOME=\(workDir)", "PYTHONPATH=\(tools.checkout)/clients/python/src"],
                          stdout: workDir + "/roster-web.stdout", stderr: log)
        url = "http://127.0.0.1:\(port)"
        do {
            try Loopback.waitUntilListening(port: port, child: child, name: "roster-web", log: log)
        } catch {
            child.stop()
            throw error
        }
    }

    func stop() { child.stop() }
}

/// vdirsyncer with a configuration of its own: `local/contacts/` paired with the server's book, found by
/// discovery from the server's root, the server winning any conflict.
struct Vdirsyncer {
    let directory: String
    let environment: [String]

    init(directory: String, server: DavServer, tools: DavTools) throws(BenchError) {
        self.directory = directory
        guard try runToCompletion(["/bin/mkdir", "-p", directory + "/local/contacts", directory + "/status"]) == 0 else {
            throw BenchError("cannot make \(directory)")
        }
        try writeText(directory + "/config", """
            [general]
            status_path = "\(directory)/status/"

            [pair book]
            a = "local"
            b = "server"
            collections = ["from b"]
            conflict_resolution = "b wins"

            [storage local]
            type = "filesystem"
            path = "\(directory)/local/"
            fileext = ".vcf"

            [storage server]
            type = "carddav"
            url = "\(server.root)/"
            username = "\(server.username)"
            password = "\(server.password)"

            """)
        try writeText(directory + "/yes", "y\ny\ny\n")
        environment = ["PATH=/usr/bin:/bin", "HOME=\(directory)", "LANG=C.UTF-8", "VDIRSYNCER_CONFIG=\(directory)/config"]
    }

    func run(_ arguments: String...) throws(BenchError) {
        let log = directory + "/\(arguments.joined(separator: "-")).log"
        let child = try Child([DavTools.vdirsyncer] + arguments, environment: environment, stdin: directory + "/yes",
                              stdout: log + ".out", stderr: log)
        let status = child.wait()
        guard status == 0 else {
            throw BenchError("vdirsyncer \(arguments.joined(separator: " ")) exited \(status): \((try? readText(log)).map { String($0.suffix(800)) } ?? "")")
        }
    }

    /// One `vdirsyncer sync`, spawn to exit, in ms.
    func timedSync() throws(BenchError) -> Double {
        let started = Clock.now()
        try run("sync")
        return Clock.microseconds(since: started) / 1_000
    }

    func localCards() -> Int {
        guard let folder = opendir(directory + "/local/contacts") else { return 0 }
        defer { closedir(folder) }
        var count = 0
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".vcf") { count += 1 }
        }
        return count
    }
}

/// tools/dav-phone-sync.py, kept running with its stdin and stdout on pipes: one command line in, one answer out.
final class PhoneClient {
    private let pid: pid_t
    private let input: Int32
    private let output: Int32
    private var buffer = LineBuffer()

    init(server: DavServer, tools: DavTools, stderrPath: String) throws(BenchError) {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let spawned: pid_t
        do {
            spawned = try Child.spawn([DavTools.python, tools.phoneScript, server.book, server.username, server.password],
                                      environment: ["PATH=/usr/bin:/bin"], actions: &actions)
        } catch {
            (toChild + fromChild).forEach { close($0) }
            throw error
        }
        close(toChild[0])
        close(fromChild[1])
        pid = spawned
        input = toChild[1]
        output = fromChild[0]
    }

    /// Sends `command` and returns the answer line; `error ...` answers are thrown.
    func send(_ command: String) throws(BenchError) -> String {
        try UnixSocket.writeAll(input, Array((command + "\n").utf8))
        let answer = String(decoding: try UnixSocket.readLine(output, &buffer), as: UTF8.self)
        if answer.hasPrefix("error") { throw BenchError("dav-phone-sync.py \(command): \(answer)") }
        return answer
    }

    /// `send`, timed from the write of the command to the read of its answer, in ms.
    func timed(_ command: String) throws(BenchError) -> (Double, String) {
        let started = Clock.now()
        let answer = try send(command)
        return (Clock.microseconds(since: started) / 1_000, answer)
    }

    func stop() {
        close(input)
        close(output)
        Child(pid: pid).stop()
    }
}
