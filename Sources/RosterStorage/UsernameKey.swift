/// How a username compares (SQLite's `COLLATE NOCASE`: ASCII letters without case, everything else by bytes),
/// as a key for a Swift set that must answer exactly as the column does; PostgreSQL stores this key in its
/// UNIQUE `username_key` column, so both backends compare alike. Canonical names are NFC, where
/// Swift's string equality (canonical equivalence) and byte equality agree.
public enum UsernameKey {
    public static func folded(_ canonical: String) -> String {
        let hasCapital = canonical.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.contains { isCapital($0) }
        } ?? canonical.utf8.contains { isCapital($0) }
        guard hasCapital else { return canonical }
        return String(decoding: canonical.utf8.map { isCapital($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    private static func isCapital(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }
}
