private typealias Script = UnicodeTables.Script

/// Lookups in `UnicodeTables` (Script_Extensions and Bidi_Class of the code points a username may hold).
enum UnicodeProperties {
    /// The run of `runs` that holds `value`; nil below the first run.
    private static func run(_ value: UInt32, in runs: [UInt32]) -> UInt8? {
        var low = 0
        var high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle] >> 8 <= value { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : UInt8(truncatingIfNeeded: runs[low - 1])
    }

    /// The script ids of a letter, mark or digit (its Script_Extensions); nil for Common and Inherited,
    /// which UTS #39 leaves out of the resolved script set.
    static func scripts(of scalar: Unicode.Scalar) -> ScriptSet? {
        let value = scalar.value
        guard let id = run(value, in: UnicodeTables.scriptRuns) else { return nil }
        switch id {
        case Script.common, Script.inherited:
            return nil
        case UnicodeTables.seeExtensions:
            guard let entry = UnicodeTables.scriptExtensions.first(where: { $0.first <= value && value <= $0.last })
            else { return nil }
            return ScriptSet(entry.scripts)
        default:
            return ScriptSet([id])
        }
    }

    /// RFC 5893's classes, grouped as the Bidi Rule tells them apart.
    enum BidiGroup: UInt8 {
        case leftToRight = 0
        /// R or AL.
        case rightToLeft = 1
        case arabicNumber = 2
        case europeanNumber = 3
        /// ES, CS, ET, ON or BN: allowed anywhere but at the end of a right-to-left name.
        case neutral = 4
        case nonSpacingMark = 5
        /// Spaces, separators and embedding controls: never in a right-to-left name.
        case other = 6
    }

    static func bidiGroup(of scalar: Unicode.Scalar) -> BidiGroup {
        let value = scalar.value
        if value < 0x80 { return asciiBidiGroup(UInt8(value)) }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark:
            return UnicodeTables.leftToRightMarks.contains(value) ? .leftToRight : .nonSpacingMark
        default:
            return run(value, in: UnicodeTables.bidiRuns).flatMap(BidiGroup.init(rawValue:)) ?? .leftToRight
        }
    }

    private static func asciiBidiGroup(_ byte: UInt8) -> BidiGroup {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): .europeanNumber
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): .leftToRight
        case 0x21...0x7E: .neutral
        default: .other
        }
    }
}

/// A set of script ids (`UnicodeTables.scriptNames`), plus UTS #39's three writing systems that join
/// several scripts, so that one intersection decides "single script" in its augmented sense.
struct ScriptSet: Equatable {
    // UTS #39 §5.1's augmented sets: Japanese, Korean, and Han with Bopomofo, past the table's own ids.
    static let japanese: UInt8 = 252
    static let korean: UInt8 = 253
    static let hanWithBopomofo: UInt8 = 254

    /// 256 bits, one per id.
    private var words = InlineArray<4, UInt64>(repeating: 0)

    static let all: ScriptSet = {
        var set = ScriptSet([])
        set.words = InlineArray(repeating: ~0)
        return set
    }()

    static let combinedWithLatin = ScriptSet([japanese, korean, hanWithBopomofo])

    init(_ ids: [UInt8]) {
        for id in ids { insert(id) }
        if contains(Script.han) {
            insert(ScriptSet.japanese)
            insert(ScriptSet.korean)
            insert(ScriptSet.hanWithBopomofo)
        }
        if contains(Script.hiragana) || contains(Script.katakana) { insert(ScriptSet.japanese) }
        if contains(Script.hangul) { insert(ScriptSet.korean) }
        if contains(Script.bopomofo) { insert(ScriptSet.hanWithBopomofo) }
    }

    var isEmpty: Bool { words.indices.allSatisfy { words[$0] == 0 } }

    func contains(_ id: UInt8) -> Bool { words[Int(id >> 6)] & (1 << UInt64(id & 63)) != 0 }

    private mutating func insert(_ id: UInt8) { words[Int(id >> 6)] |= 1 << UInt64(id & 63) }

    func intersection(_ other: ScriptSet) -> ScriptSet {
        var result = self
        for index in words.indices { result.words[index] &= other.words[index] }
        return result
    }

    static func == (left: ScriptSet, right: ScriptSet) -> Bool {
        left.words.indices.allSatisfy { left.words[$0] == right.words[$0] }
    }
}
