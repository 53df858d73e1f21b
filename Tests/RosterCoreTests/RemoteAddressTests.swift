import Testing
@testable import RosterCore

@Suite("Remote addresses of the people a gateway speaks for")
struct RemoteAddressTests {
    /// Literal → canonical text (nil: refused).
    static let cases: [(String, String?)] = [
        ("203.0.113.5", "203.0.113.5"),
        ("0.0.0.0", "0.0.0.0"),
        ("255.255.255.255", "255.255.255.255"),
        ("1.2.3", nil),
        ("1.2.3.4.5", nil),
        ("01.2.3.4", nil), // leading zero: octal to some readers
        ("1.2.3.04", nil),
        ("256.1.1.1", nil),
        ("1.2.3.4:80", nil),
        ("1..3.4", nil),
        (" 1.2.3.4", nil),
        ("1.2.3.4 ", nil),
        ("+1.2.3.4", nil),
        ("", nil),
        ("localhost", nil),
        ("::1", "::1"),
        ("::", "::"),
        ("2001:DB8::1", "2001:db8::1"),
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"), // the first of two equal runs
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"), // a single zero group stays
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"), // the longest run
        ("fe80::", "fe80::"),
        ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
        ("1:2:3:4:5:6:7::8", nil), // `::` standing for no group
        ("1:2:3:4:5:6:7", nil),
        ("1:2:3:4:5:6:7:8:9", nil),
        ("1::2::3", nil),
        (":1::2", nil),
        ("1::2:", nil),
        ("12345::1", nil),
        ("g::1", nil),
        ("::ffff:192.0.2.1", "192.0.2.1"),
        ("::FFFF:c000:0201", "192.0.2.1"),
        ("64:ff9b::192.0.2.1", "64:ff9b::c000:201"),
        ("::ffff:192.0.2.01", nil),
        ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
        ("1.2.3.4::", nil),
        ("fe80::1%eth0", nil),
        ("[::1]", nil),
        ("[::1]:80", nil),
        ("2001:db8::/64", nil),
        (String(repeating: "0", count: 61) + "::1", nil), // over 64 characters
    ]

    @Test(arguments: cases) func parsesAndWritesBackCanonically(_ literal: String, _ canonical: String?) {
        #expect(RemoteAddress(parsing: literal)?.text == canonical)
    }

    @Test func theCanonicalTextParsesToTheSameAddress() {
        for case (_, let canonical?) in Self.cases {
            #expect(RemoteAddress(parsing: canonical)?.text == canonical)
        }
    }

    @Test func iPv4IsLimitedPerAddressAndIPv6PerSlash64() throws {
        let v4 = try #require(RemoteAddress(parsing: "203.0.113.5"))
        #expect(v4.limitKey == "remote:203.0.113.5")
        let a = try #require(RemoteAddress(parsing: "2001:db8:0:1:aaaa::1"))
        let b = try #require(RemoteAddress(parsing: "2001:db8:0:1:bbbb::2"))
        let other = try #require(RemoteAddress(parsing: "2001:db8:0:2::1"))
        #expect(a.limitKey == "remote:2001:db8:0:1::/64")
        #expect(a.limitKey == b.limitKey && a.limitNetwork == b.limitNetwork)
        #expect(other.limitKey == "remote:2001:db8:0:2::/64")
        #expect(try #require(RemoteAddress(parsing: "::1")).limitKey == "remote:::/64")
        // Written back whole, though limited by network.
        #expect(a.text == "2001:db8:0:1:aaaa::1")
    }

    @Test func aRequesterIsItsRemoteWhenThereIsOneElseItsUID() throws {
        let remote = try #require(RemoteAddress(parsing: "2001:db8::7"))
        #expect(Requester(uid: 1000, remote: nil) == .uid(1000))
        #expect(Requester(uid: 1000, remote: remote) == .remote(remote))
        #expect(Requester.uid(1000).limitKey == "uid:1000")
        #expect(Requester.remote(remote).limitKey == "remote:2001:db8::/64")
        #expect(Requester.remote(remote).limitScope == .remote(try #require(RemoteAddress(parsing: "2001:db8::"))))
        #expect(Requester.uid(7).limitScope == .uid(7))
    }
}
