import RosterPostgresTesting

/// A full disk, played in a test database: every row written to Roster's tables is charged its text's size
/// against a quota, and a write past it fails as a full disk does (SQLSTATE 53100 disk_full), rolling back
/// its charge with it.
enum PostgresQuota {
    static func install(bytes: Int, conninfo: String, on cluster: PostgresTestCluster) throws {
        guard let database = conninfo.split(separator: " ").first(where: { $0.hasPrefix("dbname=") })?.dropFirst(7) else {
            throw NoDatabaseName(conninfo: conninfo)
        }
        let triggers = ["users", "session_tokens", "login_failures", "contacts", "mail_outbox", "passkeys"].map { table in
            "CREATE TRIGGER test_quota BEFORE INSERT OR UPDATE ON \(table) FOR EACH ROW EXECUTE FUNCTION test_quota_charge();"
        }
        try cluster.psql("""
            CREATE TABLE test_quota(bytes_left bigint NOT NULL);
            INSERT INTO test_quota VALUES (\(bytes));
            CREATE FUNCTION test_quota_charge() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                left_now bigint;
            BEGIN
                UPDATE test_quota SET bytes_left = bytes_left - octet_length(NEW::text) RETURNING bytes_left INTO left_now;
                IF left_now < 0 THEN
                    RAISE EXCEPTION 'test quota spent' USING ERRCODE = 'disk_full';
                END IF;
                RETURN NEW;
            END $$;
            \(triggers.joined(separator: "\n"))
            """, database: String(database))
    }
}

/// A conninfo without `dbname=`.
struct NoDatabaseName: Error {
    let conninfo: String
}
