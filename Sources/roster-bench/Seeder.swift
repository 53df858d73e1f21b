import RosterCore
import RosterCrypto
import RosterStorage
import RosterSQLite

/// The fast offline path into a database the daemon will open: one transaction, prepared inserts, and one
/// Argon2id hash reused for every account (hashing a million passwords would take hours and measure nothing).
enum Seeder {
    /// Every seeded account's password.
    static let password = "bench-pass-1"

    /// The hash of `password` with the daemon's default parameters, computed once per run.
    static func passwordHash() throws -> String {
        try PasswordHasher().hash(password)
    }

    /// Adds `count` accounts named `prefix` + a zero-padded number (`user0000001`), in one transaction.
    static func seedUsers(databasePath: String, prefix: String, count: Int, hash: String) throws {
        let database = try RosterSchema.open(path: databasePath, now: 0)
        let width = String(count).count
        try database.transaction { () throws(StoreError) in
            let insert = try database.cached("""
                INSERT INTO users(canonical, display, email, password_hash, created_at) VALUES (?, ?, NULL, ?, ?)
                """)
            for number in stride(from: 1, through: count, by: 1) {
                let name = userName(prefix: prefix, number: number, width: width)
                try insert.bind(name, at: 1)
                try insert.bind(name, at: 2)
                try insert.bind(hash, at: 3)
                try insert.bind(Int64(number), at: 4)
                try insert.run()
                insert.reset()
            }
        }
        database.close()
    }

    /// The same accounts in a PostgreSQL database whose schema rosterd made: one `COPY`, in chunks of about a
    /// MiB. `username_key` is `UsernameKey.folded`, as the daemon computes it.
    static func seedUsers(conninfo: String, prefix: String, count: Int, hash: String) throws(BenchError) {
        let admin = try PostgresAdmin(conninfo: conninfo)
        let width = String(count).count
        try admin.copyIn("COPY users(canonical, username_key, display, password_hash, created_at) FROM STDIN") { send throws(BenchError) in
            var chunk: [UInt8] = []
            chunk.reserveCapacity(1 << 20 + 4_096)
            for number in stride(from: 1, through: count, by: 1) {
                let name = userName(prefix: prefix, number: number, width: width)
                chunk += CopyText.row([name, UsernameKey.folded(name), name, hash, String(number)]).utf8
                if chunk.count >= 1 << 20 {
                    try send(chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if !chunk.isEmpty { try send(chunk) }
        }
        // The planner's figures for the daemon's first queries, as autovacuum would have them later.
        try admin.execute("ANALYZE users")
    }

    static func userName(prefix: String, number: Int, width: Int) -> String {
        let digits = String(number)
        return prefix + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The contacts `seedContacts` stores, in order; the same on every call.
    static func contactNames(count: Int) -> [ContactName] {
        var generator = ContactNameGenerator(seed: 8)
        return (0..<count).map { _ in generator.next() }
    }

    /// Adds one account (`owner`) with `names` as contacts, search keys computed as the daemon would.
    static func seedContacts(databasePath: String, owner: String, names: [ContactName], hash: String) throws {
        let database = try RosterSchema.open(path: databasePath, now: 0)
        defer { database.close() }
        let userID: Int64 = try UserStore(database: database)
            .insertUser(canonical: owner, display: owner, email: nil, passwordHash: hash, createdAt: 0).id
        let rows = names.map { name in
            let draft = ContactDraft(name: name.text, phone: name.phone)
            return (draft, ContactSearchKeys(draft: draft))
        }
        _ = try ContactStore(database: database).insertMany(userID: userID, rows, now: 0)
    }
}

/// A generated contact name and the script it is written in.
struct ContactName {
    enum Script: String, CaseIterable { case latin, han, hangul }
    let script: Script
    let text: String
    let phone: String?
}

/// Deterministic names: 40 % Latin, 30 % Han (with compound surnames, so some run to 5 characters) and 30 %
/// Hangul, each syllable drawn from a pool, so searches hit realistic numbers of matches.
struct ContactNameGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    private static let latinFirst = ["Maria", "James", "Anna", "Lucas", "Sofia", "Liam", "Emma", "Noah", "Olivia", "Mateo",
                                     "Alice", "Bruno", "Chloe", "David", "Elena", "Felix", "Grace", "Hugo", "Iris", "Jonas",
                                     "Nguyễn Văn", "Trần Thị", "Lê Minh", "Đặng Quốc", "Martín", "Zoë", "Renée", "Søren"]
    private static let latinLast = ["Garcia", "Smith", "Müller", "Rossi", "Dubois", "Silva", "Kowalski", "Novak", "Jensen",
                                    "Ánh", "Hùng", "Lan", "Martinez", "Brown", "Wilson", "Taylor", "Anderson", "Thomas",
                                    "Moore", "Clark", "Lewis", "Walker", "Young", "King", "Wright", "Scott", "Green"]
    private static let hanSurnames = ["王", "李", "张", "刘", "陈", "杨", "黄", "赵", "吴", "周", "徐", "孙", "马", "朱",
                                      "胡", "郭", "何", "林", "欧阳", "司马", "诸葛", "上官"]
    private static let hanGiven = Array("伟芳娜敏静丽强磊军洋勇艳杰涛明超秀霞平刚桂英华玉兰文辉建国志红春梅小龙飞云海")
    private static let hangulSurnames = ["김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "남궁", "황보", "선우"]
    private static let hangulGiven = Array("민서준지현수영우진하은도윤아연성호재경희태")

    private mutating func random(_ bound: Int) -> Int {
        // SplitMix64: tiny, fast and the same on every machine.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }

    private mutating func pick<T>(_ items: [T]) -> T { items[random(items.count)] }

    mutating func next() -> ContactName {
        let roll = random(10)
        let phone = random(2) == 0 ? "+1 555 \(100 + random(900)) \(1_000 + random(9_000))" : nil
        if roll < 4 {
            return ContactName(script: .latin, text: pick(Self.latinFirst) + " " + pick(Self.latinLast), phone: phone)
        }
        if roll < 7 {
            var name = pick(Self.hanSurnames)
            for _ in 0..<(1 + random(3)) { name.append(pick(Self.hanGiven)) }
            return ContactName(script: .han, text: name, phone: phone)
        }
        var name = pick(Self.hangulSurnames)
        for _ in 0..<(1 + random(3)) { name.append(pick(Self.hangulGiven)) }
        return ContactName(script: .hangul, text: name, phone: phone)
    }
}
