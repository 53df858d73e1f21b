/// One word of `[Server] GatewayUsers=`: a user name, looked up when the daemon starts or reloads, or a uid.
public enum GatewayUser: Equatable, Hashable, Sendable {
    case name(String)
    case uid(UInt32)

    /// Nil unless `word` is a numeric uid (below 4294967295, which means "no uid") or a user name as useradd
    /// takes it: letters, digits, `_`, `.`, `-` (a trailing `$` for Samba's machine accounts), not starting with
    /// `-`, at most 32 bytes.
    public init?(_ word: String) {
        if !word.isEmpty, word.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard let uid = UInt32(word), uid != UInt32.max else { return nil }
            self = .uid(uid)
            return
        }
        let bytes = Array(word.utf8)
        guard (1...32).contains(bytes.count), bytes.first != UInt8(ascii: "-") else { return nil }
        for (index, byte) in bytes.enumerated() {
            let isLast = index == bytes.count - 1
            switch byte {
            case 0x30...0x39, 0x41...0x5a, 0x61...0x7a, UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"): continue
            case UInt8(ascii: "$") where isLast && bytes.count > 1: continue
            default: return nil
            }
        }
        self = .name(word)
    }

    /// As written in the file.
    public var text: String {
        switch self {
        case .name(let name): name
        case .uid(let uid): String(uid)
        }
    }
}
