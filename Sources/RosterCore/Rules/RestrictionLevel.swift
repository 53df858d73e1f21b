private typealias Script = UnicodeTables.Script

/// UTS #39 §5.2's "Highly Restrictive" level, so that `аlice1` (a Cyrillic а) is refused next to `alice1`.
///
/// A name passes when its letters share one script (Common and Inherited characters, such as digits and
/// combining marks, go with any), or when it is Latin plus one of the writing systems that mix scripts:
/// Japanese (Han, Hiragana, Katakana), Chinese with Bopomofo, or Korean (Han, Hangul). Whole-script
/// confusables (a name all in Cyrillic that reads like a Latin one) are a separate UTS #39 check, not made here.
public enum RestrictionLevel {
    public static func isHighlyRestrictive(_ name: String) -> Bool {
        var resolved = ScriptSet.all
        var resolvedWithoutLatin = ScriptSet.all
        for scalar in name.unicodeScalars {
            guard let scripts = UnicodeProperties.scripts(of: scalar) else { continue }
            resolved = resolved.intersection(scripts)
            if !scripts.contains(Script.latin) { resolvedWithoutLatin = resolvedWithoutLatin.intersection(scripts) }
        }
        return !resolved.isEmpty || !resolvedWithoutLatin.intersection(.combinedWithLatin).isEmpty
    }
}
