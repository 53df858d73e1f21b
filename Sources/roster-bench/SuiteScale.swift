import Glibc

/// The scenarios on big databases, seeded offline: a million users, and a hundred thousand contacts.
extension Suite {
    func usersAtScale() throws {
        let count = options.users
        let seedStarted = Clock.now()
        let database = try seededUsers("users", prefix: "user", count: count)
        let seedSeconds = Double(Clock.now() - seedStarted) / 1e9
        // Half the checks hit a taken name, half a free one, spread over the whole key range.
        let width = String(count).count
        var requests: [[UInt8]] = []
        for step in 0..<64 {
            let number = 1 + (step * 7_919 * 127) % max(count, 1)
            let name = step.isMultiple(of: 2) ? Seeder.userName(prefix: "user", number: number, width: width)
                                              : Seeder.userName(prefix: "free", number: number, width: width)
            requests.append(Requests.checkUsername(name))
        }
        let trips = options.roundTrips
        var startups: [Double] = []
        var warmUps: [Double] = []
        var residents: [Double] = []
        let results = try alternate(database: database) { server in
            if server.kind == .rosterd {
                startups.append(server.startupMicroseconds / 1_000)
                warmUps.append(server.warmUpMicroseconds / 1_000)
                residents.append(Double(server.residentBytes()) / 1_048_576)
            }
            let fd = try UnixSocket.connect(server.socketPath)
            defer { close(fd) }
            if server.kind == .rosterd {
                // Half the checks must meet a seeded name, or the figure would time free names only.
                let seeded = try RoundTrips.call(fd: fd, requests[0])
                guard seeded.contains("\"taken\"") else { throw BenchError("a seeded name is not taken: \(seeded)") }
                let free = try RoundTrips.call(fd: fd, requests[1])
                guard free.contains("\"available\"") else { throw BenchError("a free name is not available: \(free)") }
            }
            var samples = try RoundTrips.measure(fd: fd, requests: requests, count: trips, warmup: trips / 10)
            return [samples.percentile(50), samples.percentile(99)]
        }
        let scenario = "\(count) users"
        record(scenario, "check_username p50", unit: "µs", rosterd: results.rosterd.map { $0[0] },
               floor: results.floor.map { $0[0] })
        record(scenario, "check_username p99", unit: "µs", rosterd: results.rosterd.map { $0[1] },
               floor: results.floor.map { $0[1] }, target: "≤ 100 µs") { mine, _ in mine.median <= 100 }
        // The first start follows the offline seeding, so it runs quick_check; each later one follows the previous
        // run's SIGTERM, a clean shutdown, and runs the light check (see rosterd(8), the database checks).
        let cleanStarts = startups.count > 1 ? Array(startups.dropFirst()) : startups
        record(scenario, "start-up to READY=1", unit: "ms", rosterd: cleanStarts, floor: nil, target: "≤ 200 ms") { mine, _ in
            mine.median <= 200
        }
        if startups.count > 1 {
            record(scenario, "first start-up, after seeding (quick_check)", unit: "ms", rosterd: Array(startups.prefix(1)),
                   floor: nil)
        }
        record(scenario, "usernames in memory after READY", unit: "ms", rosterd: warmUps, floor: nil)
        record(scenario, "daemon RSS, usernames in memory", unit: "MiB", rosterd: residents, floor: nil)
        let bytes = storage.size(of: database)
        record(scenario, "database size", unit: "MiB", rosterd: [Double(bytes) / 1_048_576], floor: nil)
        notes.append("users: seeded \(count) accounts offline in \(String(format: "%.1f", seedSeconds)) s "
                     + "(\(count > 0 ? bytes / count : 0) bytes per account on disk)")
    }

    /// `name`'s database holding `count` accounts named `prefix` and a number, seeded offline when it is made.
    /// PostgreSQL's schema is rosterd's own (its migrations): one start on the empty database makes it, then
    /// the rows go in with COPY.
    func seededUsers(_ name: String, prefix: String, count: Int) throws -> BenchDatabase {
        let (database, fresh) = try storage.database(name)
        guard fresh else { return database }
        switch database {
        case .sqlite(let path):
            try Seeder.seedUsers(databasePath: path, prefix: prefix, count: count, hash: try passwordHash())
        case .postgresql(let conninfo):
            try startRosterd(database: database).stop()
            try Seeder.seedUsers(conninfo: conninfo, prefix: prefix, count: count, hash: try passwordHash())
        }
        return database
    }

    func contactsAtScale() throws {
        let count = options.contacts
        let database = workDir + "/contacts.db"
        let owner = "owner1"
        let seedStarted = Clock.now()
        let names = Seeder.contactNames(count: count)
        if access(database, F_OK) != 0 {
            try Seeder.seedContacts(databasePath: database, owner: owner, names: names, hash: try passwordHash())
        }
        notes.append("contacts: seeded \(count) contacts (search keys included) offline in "
                     + String(format: "%.1f", Double(Clock.now() - seedStarted) / 1e9) + " s")
        let classes = Self.queryClasses(names)
        let searches = options.searchesPerQueryClass
        let login = Requests.login(id: 1, username: owner, password: Seeder.password)
        var importFigures: [[Double]] = []
        let results = try alternate(database: database) { server in
            let fd = try UnixSocket.connect(server.socketPath)
            defer { close(fd) }
            if server.kind == .rosterd {
                let answer = try RoundTrips.call(fd: fd, login)
                guard answer.contains("\"result\"") else { throw BenchError("log-in for the contacts scenario failed: \(answer)") }
                // The first search loads the index from the rows; that is start-up, not search.
                _ = try RoundTrips.call(fd: fd, Requests.search("a"))
            }
            var figures: [[Double]] = []
            for (_, requests) in classes {
                var samples = try RoundTrips.measure(fd: fd, requests: requests, count: searches, warmup: min(20, searches))
                figures.append([samples.percentile(50), samples.percentile(99)])
            }
            if server.kind == .rosterd { importFigures.append(try importOneRow(fd: fd)) }
            return figures
        }
        for (position, (label, _)) in classes.enumerated() {
            let scenario = "\(count) contacts"
            record(scenario, "search \(label) p50", unit: "µs", rosterd: results.rosterd.map { $0[position][0] },
                   floor: results.floor.map { $0[position][0] })
            record(scenario, "search \(label) p99", unit: "µs", rosterd: results.rosterd.map { $0[position][1] },
                   floor: results.floor.map { $0[position][1] }, target: "≤ 5000 µs") { mine, _ in mine.median <= 5_000 }
        }
        for (column, metric) in ["import one row p50", "import one row p99", "search after it p50", "search after it p99"].enumerated() {
            record("\(count) contacts", metric, unit: "µs", rosterd: importFigures.map { $0[column] }, floor: nil)
        }
    }

    /// A one-row import once read the whole book and made the next search rebuild the index on the loop
    /// (about 340 ms at 15k contacts). p50 and p99 of one-row imports, and of the search right after each.
    private func importOneRow(fd: Int32) throws -> [Double] {
        var imports = Samples()
        var searches = Samples()
        let tag = Clock.now()
        for number in 0..<options.importsOfOneRow {
            var started = Clock.now()
            let answer = try RoundTrips.call(fd: fd, Requests.importOneRow("Imported \(tag) \(number)"))
            guard answer.contains("\"added\":1") else { throw BenchError("a one-row import failed: \(answer)") }
            imports.add(Clock.microseconds(since: started))
            started = Clock.now()
            _ = try RoundTrips.call(fd: fd, Requests.search("imported"))
            searches.add(Clock.microseconds(since: started))
        }
        return [imports.percentile(50), imports.percentile(99), searches.percentile(50), searches.percentile(99)]
    }

    /// For each script and length 1, 3 and 5: up to 50 distinct prefixes of generated names, so every
    /// query matches something and the set is the same from run to run.
    static func queryClasses(_ names: [ContactName]) -> [(String, [[UInt8]])] {
        var classes: [(String, [[UInt8]])] = []
        for script in ContactName.Script.allCases {
            for length in [1, 3, 5] {
                var seen = Set<String>()
                var requests: [[UInt8]] = []
                for name in names where name.script == script {
                    let characters = Array(name.text)
                    guard characters.count >= length else { continue }
                    let query = String(characters[0..<length]).lowercased()
                    guard seen.insert(query).inserted else { continue }
                    requests.append(Requests.search(query))
                    if requests.count == 50 { break }
                }
                if !requests.isEmpty { classes.append(("\(script.rawValue) \(length)", requests)) }
            }
        }
        return classes
    }
}
