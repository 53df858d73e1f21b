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
        case ScriptSet.common, ScriptSet.inherited:
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
    static let common: UInt8 = 0
    static let inherited: UInt8 = 1
    static let latin: UInt8 = 2
    static let han: UInt8 = 3
    static let hiragana: UInt8 = 4
    static let katakana: UInt8 = 5
    static let bopomofo: UInt8 = 6
    static let hangul: UInt8 = 7
    static let greek: UInt8 = 8
    static let hebrew: UInt8 = 11
    // UTS #39 §5.1's augmented sets: Japanese, Korean, and Han with Bopomofo, past the table's own ids.
    static let japanese: UInt8 = 252
    static let korean: UInt8 = 253
    static let hanWithBopomofo: UInt8 = 254

    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    static let all: ScriptSet = {
        var set = ScriptSet([])
        set.words = (~0, ~0, ~0, ~0)
        return set
    }()

    static let combinedWithLatin = ScriptSet([japanese, korean, hanWithBopomofo])

    init(_ ids: [UInt8]) {
        for id in ids { insert(id) }
        if contains(ScriptSet.han) { insert(ScriptSet.japanese); insert(ScriptSet.korean); insert(ScriptSet.hanWithBopomofo) }
        if contains(ScriptSet.hiragana) || contains(ScriptSet.katakana) { insert(ScriptSet.japanese) }
        if contains(ScriptSet.hangul) { insert(ScriptSet.korean) }
        if contains(ScriptSet.bopomofo) { insert(ScriptSet.hanWithBopomofo) }
    }

    var isEmpty: Bool { words == (0, 0, 0, 0) }

    func contains(_ id: UInt8) -> Bool {
        let bit = UInt64(1) << UInt64(id & 63)
        switch id >> 6 {
        case 0: return words.0 & bit != 0
        case 1: return words.1 & bit != 0
        case 2: return words.2 & bit != 0
        default: return words.3 & bit != 0
        }
    }

    private mutating func insert(_ id: UInt8) {
        let bit = UInt64(1) << UInt64(id & 63)
        switch id >> 6 {
        case 0: words.0 |= bit
        case 1: words.1 |= bit
        case 2: words.2 |= bit
        default: words.3 |= bit
        }
    }

    func intersection(_ other: ScriptSet) -> ScriptSet {
        var result = self
        result.words = (words.0 & other.words.0, words.1 & other.words.1, words.2 & other.words.2,
                        words.3 & other.words.3)
        return result
    }

    static func == (left: ScriptSet, right: ScriptSet) -> Bool { left.words == right.words }
}
