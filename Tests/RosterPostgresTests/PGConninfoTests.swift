import RosterCore
import Testing

/// A conninfo may hold a password; what is logged never does.
@Suite("PostgreSQL conninfo masking")
struct PGConninfoTests {
    @Test(arguments: [
        ("host=db user=roster password=s3cret dbname=roster", "host=db user=roster password=*** dbname=roster"),
        ("password = 's3 cr\\'et' host=db", "password = *** host=db"),
        ("PASSWORD=x", "PASSWORD=***"),
        ("host=/run/postgresql dbname=roster", "host=/run/postgresql dbname=roster"),
        ("postgresql://roster:s3cret@db:5432/roster", "postgresql://roster:***@db:5432/roster"),
        ("postgres://roster@db/roster?password=s3cret&sslmode=require", "postgres://roster@db/roster?password=***&sslmode=require"),
        ("postgresql://db/roster", "postgresql://db/roster"),
    ])
    func passwordsAreMasked(conninfo: String, shown: String) {
        #expect(Conninfo.masked(conninfo) == shown)
        #expect(!Conninfo.masked(conninfo).contains("s3"))
    }
}
