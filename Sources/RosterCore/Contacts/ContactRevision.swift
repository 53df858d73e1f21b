/// The texts a contact revision travels as: a contact's `etag` and the `token` of `contacts.changes`.
///
/// Each user's contacts have one change sequence: every write of a contact (add, update, put, import, removal)
/// takes the next number, and the contact (or its tombstone) keeps it as its revision. A contact's etag names its
/// revision, so it changes whenever its card does; a change token names the revision a sync has seen up to.
/// Both are opaque to clients, and a text this parser does not take is no revision at all.
public enum ContactRevision {
    /// The etag of a contact at `revision`.
    public static func etag(_ revision: Int64) -> String { "r" + String(revision) }

    /// The change token of a sync that has seen every change up to `revision`.
    public static func token(_ revision: Int64) -> String { "ct1-" + String(revision) }

    /// The revision an etag names, or nil for a text that is no etag of ours.
    public static func revision(etag: String) -> Int64? { number(after: "r", in: etag) }

    /// The revision a change token names, or nil for a malformed token.
    public static func revision(token: String) -> Int64? { number(after: "ct1-", in: token) }

    /// A decimal number of at most 18 digits (so no value overflows), without a leading zero unless it is 0.
    private static func number(after prefix: String, in text: String) -> Int64? {
        let bytes = Array(text.utf8)
        let head = Array(prefix.utf8)
        guard bytes.count > head.count, bytes.count - head.count <= 18, bytes.starts(with: head) else { return nil }
        let digits = bytes[head.count...]
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        if digits.count > 1, digits.first == 0x30 { return nil }
        return digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
    }
}
