import CLibPQ

/// A blocking libpq connection for the benchmark's own set-up: making databases, seeding them with COPY and
/// reading their size. Never used while a figure is being measured.
final class PostgresAdmin {
    private let connection: OpaquePointer

    init(conninfo: String) throws(BenchError) {
        guard let connection = PQconnectdb(conninfo) else { throw BenchError("PostgreSQL: out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(connection)
            PQfinish(connection)
            throw BenchError("cannot connect to PostgreSQL (\(conninfo)): \(message)")
        }
        // The server's NOTICEs (a DROP … IF EXISTS of nothing) would go to stderr between the figures.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.connection = connection
    }

    deinit { PQfinish(connection) }

    /// Runs `sql` (no parameters) and returns the first column of the first row, if any.
    @discardableResult
    func execute(_ sql: String) throws(BenchError) -> String? {
        guard let result = PQexec(connection, sql) else { throw BenchError("PostgreSQL: out of memory") }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw BenchError("PostgreSQL: \(sql.prefix(80)): \(Self.message(connection))")
        }
        guard PQntuples(result) > 0, PQnfields(result) > 0, PQgetisnull(result, 0, 0) == 0,
              let value = PQgetvalue(result, 0, 0) else { return nil }
        return String(cString: value)
    }

    /// `COPY … FROM STDIN` in text format: `produce` is called with a sink until it returns false, and each
    /// chunk handed to the sink goes to the server as it comes.
    func copyIn(_ copy: String, _ produce: (_ send: ([UInt8]) throws(BenchError) -> Void) throws(BenchError) -> Void) throws(BenchError) {
        guard let started = PQexec(connection, copy) else { throw BenchError("PostgreSQL: out of memory") }
        let status = PQresultStatus(started)
        PQclear(started)
        guard status == PGRES_COPY_IN else { throw BenchError("PostgreSQL: \(copy): \(Self.message(connection))") }
        let connection = self.connection
        var failure: BenchError?
        do throws(BenchError) {
            try produce { (chunk: [UInt8]) throws(BenchError) in
                let sent = chunk.withUnsafeBufferPointer { buffer in
                    buffer.baseAddress.map { base in
                        base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                            PQputCopyData(connection, $0, Int32(buffer.count))
                        }
                    } ?? 1
                }
                guard sent == 1 else { throw BenchError("PostgreSQL: COPY: \(Self.message(connection))") }
            }
        } catch {
            failure = error
        }
        _ = PQputCopyEnd(connection, failure == nil ? nil : "the benchmark's seeding failed")
        var ended = true
        while let result = PQgetResult(connection) {
            if PQresultStatus(result) != PGRES_COMMAND_OK { ended = false }
            PQclear(result)
        }
        if let failure { throw failure }
        guard ended else { throw BenchError("PostgreSQL: \(copy): \(Self.message(connection))") }
    }

    private static func message(_ connection: OpaquePointer) -> String {
        PQerrorMessage(connection).map { String(cString: $0).trimmingSpaces } ?? "unknown error"
    }
}

/// COPY's text format: columns split by tabs, rows by newlines, `\N` for NULL, and `\`, tab, newline and
/// carriage return escaped inside a value.
enum CopyText {
    static func row(_ values: [String?]) -> String {
        var line = ""
        for (index, value) in values.enumerated() {
            if index > 0 { line.append("\t") }
            guard let value else {
                line += "\\N"
                continue
            }
            for character in value {
                switch character {
                case "\\": line += "\\\\"
                case "\t": line += "\\t"
                case "\n": line += "\\n"
                case "\r": line += "\\r"
                case "\r\n": line += "\\r\\n"
                default: line.append(character)
                }
            }
        }
        return line + "\n"
    }
}
