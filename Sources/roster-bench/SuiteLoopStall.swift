import Glibc

/// Loading never stalls the loop. An unrelated connection pings `session.whoami` back to back while
/// another connection, phase by phase, makes the daemon do its heaviest work for one user: load a big book's
/// search index, import 64 KiB of CSV, export the whole book in one answer, and back the database up. Each phase's
/// round trips are judged against p99 ≤ 2 ms and max ≤ 10 ms. rosterd only: the floor does none of this work.
extension Suite {
    /// The phases, in the order they run on one fresh daemon (so the first search finds no index loaded).
    enum StallPhase: String, CaseIterable {
        case idle = "nothing else running"
        case logIn = "log-in"
        case indexLoad = "first search (index loads)"
        case importCSV = "64 KiB CSV import"
        case export = "whole-book export"
        case backup = "admin.backup"
    }

    func loopStall() throws {
        let count = options.contacts
        let owner = "owner1"
        let pristine = workDir + "/loop-stall-seed.db"
        if access(pristine, F_OK) != 0 {
            try Seeder.seedContacts(databasePath: pristine, owner: owner, names: Seeder.contactNames(count: count),
                                    hash: try passwordHash())
        }
        let csv = Self.importCSV(bytes: options.stallImportBytes)
        var perRun: [StallPhase: [[Double]]] = [:]
        for run in 0..<options.runs {
            // Every run starts from the same seeded book: the import of the run before is not there.
            let database = workDir + "/loop-stall.db"
            try copyFresh(pristine, to: database)
            let backupPath = workDir + "/loop-stall-backup-\(run).db"
            unlink(backupPath)
            defer { unlink(backupPath) }
            let daemon = try startRosterd(database: database)
            defer { daemon.stop() }
            let requests: [StallPhase: [[UInt8]]] = [
                .logIn: [Requests.login(id: 1, username: owner, password: Seeder.password)],
                .indexLoad: [Requests.search("a", id: 2)],
                .importCSV: [Requests.importCSV(csv.text, id: 3)],
                .export: [Requests.exportAll(format: "csv", id: 4)],
                .backup: [Requests.backup(to: backupPath, id: 5)],
            ]
            let probed = try probePhases(daemon, requests)
            try Self.checkAnswers(probed, contacts: count, imported: csv.rows)
            for phase in StallPhase.allCases {
                guard var seen = probed[phase] else { continue }
                perRun[phase, default: []].append([Double(seen.samples.count), seen.samples.percentile(50),
                                                    seen.samples.percentile(99), seen.samples.percentile(100),
                                                    seen.seconds * 1_000])
            }
        }
        let scenario = "loop stall (\(count) contacts)"
        for phase in StallPhase.allCases {
            let runs = perRun[phase] ?? []
            let column = { (index: Int) in runs.map { $0[index] } }
            let judged = phase != .idle
            record(scenario, "\(phase.rawValue): probes", unit: "", rosterd: column(0), floor: nil)
            record(scenario, "\(phase.rawValue): p50", unit: "µs", rosterd: column(1), floor: nil)
            record(scenario, "\(phase.rawValue): p99", unit: "µs", rosterd: column(2), floor: nil,
                   target: judged ? "≤ 2000 µs" : nil, met: judged ? { mine, _ in mine.median <= 2_000 } : nil)
            // A maximum is judged on the worst run, not the median one: one stall is one too many.
            record(scenario, "\(phase.rawValue): max", unit: "µs", rosterd: column(3), floor: nil,
                   target: judged ? "≤ 10000 µs, every run" : nil, met: judged ? { mine, _ in mine.max <= 10_000 } : nil)
            record(scenario, "\(phase.rawValue): duration", unit: "ms", rosterd: column(4), floor: nil)
        }
        notes.append("loop stall: one connection pings session.whoami back to back; another logs in as the owner of "
                     + "\(count) contacts and searches (a fresh daemon: the index loads), imports \(csv.text.utf8.count) "
                     + "bytes of CSV (\(csv.rows) rows), exports the book as CSV in one answer, then runs admin.backup")
    }

    /// The probe's view of each phase, run one after another on `daemon`.
    private func probePhases(_ daemon: ServerProcess, _ requests: [StallPhase: [[UInt8]]]) throws
        -> [StallPhase: ProbedPhase] {
        let probeFD = try UnixSocket.connect(daemon.socketPath)
        defer { close(probeFD) }
        let workerFD = try UnixSocket.connect(daemon.socketPath, nonBlocking: true)
        defer { close(workerFD) }
        var probe = LoopProbe(fd: probeFD, ping: Requests.whoami)
        for _ in 0..<200 { _ = try probe.roundTrip() }
        var probed: [StallPhase: ProbedPhase] = [:]
        for phase in StallPhase.allCases {
            if phase == .idle {
                probed[phase] = try probe.idle(seconds: options.quick ? 0.05 : 0.5)
            } else {
                probed[phase] = try probe.during(requests[phase] ?? [], on: workerFD)
            }
        }
        return probed
    }

    /// Each phase must have done its work, or its figures would time nothing.
    private static func checkAnswers(_ probed: [StallPhase: ProbedPhase], contacts: Int, imported: Int) throws(BenchError) {
        for (phase, seen) in probed {
            for answer in seen.answers where !AnswerReader.isResult(answer) {
                throw BenchError("loop stall, \(phase.rawValue): \(String(decoding: answer.prefix(300), as: UTF8.self))")
            }
        }
        let importAnswer = String(decoding: probed[.importCSV]?.answers.first ?? [], as: UTF8.self)
        guard importAnswer.contains("\"added\":\(imported),") else {
            throw BenchError("loop stall: the import did not add its \(imported) rows: \(importAnswer)")
        }
        let export = probed[.export]?.answers.first ?? []
        // A CSV row is at least a name and three commas.
        guard export.count > contacts * 4, String(decoding: export.suffix(40), as: UTF8.self).contains("\"next_cursor\":null") else {
            throw BenchError("loop stall: the export was not the whole book (\(export.count) bytes)")
        }
    }

    /// About `bytes` of CSV (never more), names that are in no seeded book, each with a phone.
    static func importCSV(bytes: Int) -> (text: String, rows: Int) {
        var text = "name,phone\r\n"
        var rows = 0
        while true {
            let row = "Stall Import \(rows),+1 555 \(String(100_000 + rows))\r\n"
            guard text.utf8.count + row.utf8.count <= bytes else { break }
            text += row
            rows += 1
        }
        return (text, rows)
    }

    /// `target` as a copy of `source`, with no `-wal` or `-shm` of an earlier run beside it.
    private func copyFresh(_ source: String, to target: String) throws {
        for suffix in ["", "-wal", "-shm"] { unlink(target + suffix) }
        guard try runToCompletion(["/bin/cp", source, target]) == 0 else { throw BenchError("cannot copy \(source) to \(target)") }
    }
}
