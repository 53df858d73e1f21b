import Testing
@testable import RosterCore

/// A connection string shown anywhere (log, error, check-config) has no password left in it, in either of libpq's
/// forms, and everything else reads as written.
@Suite("Conninfo masking")
struct ConninfoTests {
    @Test(arguments: [
        ("host=/run/postgresql dbname=roster", "host=/run/postgresql dbname=roster"),
        ("host=db password=s3cret dbname=roster", "host=db password=*** dbname=roster"),
        ("password = 's3 cr\\'et' user=roster", "password = *** user=roster"),
        ("PASSWORD=s3cret", "PASSWORD=***"),
        ("user=a password=", "user=a password=***"),
        ("dbname='my db' password=x", "dbname='my db' password=***"),
        ("postgresql://roster:s3cret@db.example:5432/roster?sslmode=require",
         "postgresql://roster:***@db.example:5432/roster?sslmode=require"),
        ("postgres://db/roster?user=r&password=s3cret", "postgres://db/roster?user=r&password=***"),
        ("postgresql://roster@db/roster", "postgresql://roster@db/roster"),
    ])
    func passwordsAreMasked(conninfo: String, shown: String) {
        #expect(Conninfo.masked(conninfo) == shown)
        #expect(!Conninfo.masked(conninfo).contains("s3"))
    }
}
