#!/usr/bin/env python3
"""Writes Sources/RosterCore/Rules/UnicodeTables.swift from the Unicode Character Database.

Swift exposes general category, age, default-ignorable and noncharacter, but neither Script nor Bidi_Class,
which the username rules need (UTS #39 mixed-script detection, the RFC 5893 Bidi Rule). This script builds the
two as compact run tables over just the code points a username may hold (letters, marks and decimal digits,
the only non-ASCII ones PRECIS IdentifierClass lets through): every other code point is refused before a table
is read, so it is free to extend whichever run is next to it, and the tables stay small.

Usage (Debian: `apt-get install unicode-data`, which puts the files in /usr/share/unicode):
    tools/unicode-tables.py [UCD_DIRECTORY] > Sources/RosterCore/Rules/UnicodeTables.swift
"""
import re
import sys

UCD = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"
IDENTIFIER_CATEGORIES = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Nd"}
# What else IdentifierClass can let through: ASCII7, the join controls (CONTEXTJ), and RFC 5892 §2.6's
# exceptions that are valid in context (CONTEXTO) or outright (PVALID).
OTHER_IDENTIFIER_CODE_POINTS = {*range(0x21, 0x7F), 0x200C, 0x200D,
                         0x00DF, 0x03C2, 0x06FD, 0x06FE, 0x0F0B, 0x3007,
                         0x00B7, 0x0375, 0x05F3, 0x05F4, 0x30FB, *range(0x0660, 0x066A), *range(0x06F0, 0x06FA)}
# The scripts the restriction-level check names; each must exist in Scripts.txt.
NAMED_SCRIPTS = ["Common", "Inherited", "Latin", "Han", "Hiragana", "Katakana", "Bopomofo", "Hangul",
                 "Greek", "Hebrew"]
SEE_EXTENSIONS = 255


def read_version():
    with open(f"{UCD}/ReadMe.txt", encoding="utf-8") as text:
        match = re.search(r"Version (\d+\.\d+\.\d+)", text.read())
    return match.group(1) if match else "unknown"


def parse_ranges(path):
    """Yields (first, last, value) for each data line of a UCD `range ; value` file."""
    with open(path, encoding="utf-8") as text:
        for line in text:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            span, value = (part.strip() for part in line.split(";")[:2])
            first, _, last = span.partition("..")
            yield int(first, 16), int(last or first, 16), value


def unicode_data():
    """(general category, bidi class, canonical decomposition) for every assigned code point."""
    table = {}
    pending_first = None
    with open(f"{UCD}/UnicodeData.txt", encoding="utf-8") as text:
        for line in text:
            fields = line.rstrip("\n").split(";")
            code, name, category, bidi, decomposition = int(fields[0], 16), fields[1], fields[2], fields[4], fields[5]
            canonical = [] if decomposition == "" or decomposition.startswith("<") else \
                [int(part, 16) for part in decomposition.split()]
            if name.endswith(", First>"):
                pending_first = code
                continue
            start = pending_first if name.endswith(", Last>") else code
            pending_first = None
            for point in range(start, code + 1):
                table[point] = (category, bidi, canonical)
    return table


def full_decomposition_length(point, data):
    if 0xAC00 <= point <= 0xD7A3:
        return 3 if (point - 0xAC00) % 28 else 2
    canonical = data.get(point, (None, None, []))[2]
    return sum(full_decomposition_length(part, data) for part in canonical) if canonical else 1


def runs(values):
    """Collapses a code point → value map (None = don't care) into (start, value) runs."""
    result = []
    current = None
    for point in range(0x110000):
        value = values.get(point)
        if value is None or value == current:
            continue
        result.append((point, value))
        current = value
    return result


def main():
    data = unicode_data()
    allowed = {point for point, (category, _, _) in data.items() if category in IDENTIFIER_CATEGORIES}
    allowed |= OTHER_IDENTIFIER_CODE_POINTS

    scripts = {}
    for first, last, value in parse_ranges(f"{UCD}/Scripts.txt"):
        for point in range(first, last + 1):
            scripts[point] = value
    long_names = {}
    with open(f"{UCD}/PropertyValueAliases.txt", encoding="utf-8") as text:
        for line in text:
            parts = [part.strip() for part in line.split("#", 1)[0].split(";")]
            if len(parts) >= 3 and parts[0] == "sc":
                long_names[parts[1]] = parts[2]
    extensions = {}
    for first, last, value in parse_ranges(f"{UCD}/ScriptExtensions.txt"):
        for point in range(first, last + 1):
            extensions[point] = [long_names[short] for short in value.split()]

    used = sorted({scripts.get(point, "Unknown") for point in allowed}
                  | {name for point in allowed for name in extensions.get(point, [])})
    order = NAMED_SCRIPTS + [name for name in used if name not in NAMED_SCRIPTS]
    assert all(name in used for name in NAMED_SCRIPTS), "a named script is missing"
    assert len(order) < SEE_EXTENSIONS
    script_id = {name: index for index, name in enumerate(order)}

    script_values = {}
    extension_entries = {}
    for point in allowed:
        names = extensions.get(point, [scripts.get(point, "Unknown")])
        if len(names) == 1:
            script_values[point] = script_id[names[0]]
        else:
            script_values[point] = SEE_EXTENSIONS
            extension_entries[point] = tuple(sorted(script_id[name] for name in names))
    script_runs = runs(script_values)
    extension_runs = []
    for point in sorted(extension_entries):
        ids = extension_entries[point]
        if extension_runs and extension_runs[-1][1] == point - 1 and extension_runs[-1][2] == ids:
            extension_runs[-1][1] = point
        else:
            extension_runs.append([point, point, ids])

    # Bidi: marks are NSM by their category at run time (checked here), ASCII is classified in code, and
    # everything else defaults to L, so the table lists only the letters and digits that are not L.
    groups = {"L": 0, "R": 1, "AL": 1, "AN": 2, "EN": 3, "ES": 4, "CS": 4, "ET": 4, "ON": 4, "BN": 4, "NSM": 5}
    left_to_right_marks = sorted(point for point, (category, bidi, _) in data.items()
                                 if category in {"Mn", "Me"} and bidi != "NSM")
    for point in left_to_right_marks:
        assert data[point][1] == "L", f"U+{point:04X} is a mark of bidi class {data[point][1]}"
    bidi_values = {}
    for point in allowed:
        category, bidi, _ = data.get(point, ("Cn", "L", []))
        if point < 0x80 or category in {"Mn", "Me"}:
            continue
        bidi_values[point] = groups.get(bidi, 6)
    bidi_runs = runs(bidi_values)

    longest = max(full_decomposition_length(point, data) for point in list(data) + list(range(0xAC00, 0xD7A4)))
    major, minor, _ = read_version().split(".")

    out = sys.stdout
    out.write("// Generated by tools/unicode-tables.py from the Unicode Character Database "
              f"{read_version()} (UnicodeData.txt's\n// Bidi_Class and decompositions, Scripts.txt, "
              "ScriptExtensions.txt). Do not edit; run the script again.\n\n")
    out.write("/// Script and Bidi_Class of the code points a username may hold, which Swift does not expose.\n")
    out.write("/// Runs are `start << 8 | value`; a run lasts until the next one starts. Code points IdentifierClass\n")
    out.write("/// refuses are never looked up, so they extend whichever run is next to them.\n")
    out.write("enum UnicodeTables {\n")
    out.write(f"    /// The Unicode version the tables describe; code points assigned later are unassigned here.\n")
    out.write(f"    static let version: (major: Int, minor: Int) = ({int(major)}, {int(minor)})\n\n")
    out.write("    /// The most code points one code point's full canonical decomposition has (NFC composes at most\n")
    out.write("    /// this many into one), which bounds how far normalization can shrink a name.\n")
    out.write(f"    static let longestCanonicalDecomposition = {longest}\n\n")
    out.write("    /// Script ids: the index in this list.\n")
    out.write("    static let scriptNames: [String] = [\n")
    for start in range(0, len(order), 8):
        out.write("        " + ", ".join(f'"{name}"' for name in order[start:start + 8]) + ",\n")
    out.write("    ]\n\n")
    out.write("    /// The ids of the scripts the rules name.\n")
    out.write("    enum Script {\n")
    for name in NAMED_SCRIPTS:
        camel = name[0].lower() + name[1:]
        out.write(f"        static let {camel}: UInt8 = {script_id[name]}\n")
    out.write("    }\n\n")
    out.write(f"    /// The run value meaning \"several scripts\": see `scriptExtensions`.\n")
    out.write(f"    static let seeExtensions: UInt8 = {SEE_EXTENSIONS}\n\n")
    out.write(f"    /// {len(script_runs)} runs of Script (or Script_Extensions, when it names one script).\n")
    out.write("    static let scriptRuns: [UInt32] = [\n")
    write_runs(out, script_runs)
    out.write("    ]\n\n")
    out.write("    /// Code points whose Script_Extensions name several scripts: first, last, script ids.\n")
    out.write("    static let scriptExtensions: [(first: UInt32, last: UInt32, scripts: [UInt8])] = [\n")
    for first, last, ids in extension_runs:
        out.write(f"        (0x{first:04X}, 0x{last:04X}, [{', '.join(str(i) for i in ids)}]),\n")
    out.write("    ]\n\n")
    out.write("    /// Bidi groups of non-ASCII letters and digits (0 L, 1 R or AL, 2 AN, 3 EN, 4 ES/CS/ET/ON/BN, 6 other);\n")
    out.write(f"    /// marks are NSM by their category. {len(bidi_runs)} runs.\n")
    out.write("    static let bidiRuns: [UInt32] = [\n")
    write_runs(out, bidi_runs)
    out.write("    ]\n\n")
    out.write("    /// The only marks whose Bidi_Class is not NSM; each is L.\n")
    out.write("    static let leftToRightMarks: [UInt32] = [" + ", ".join(f"0x{point:04X}" for point in left_to_right_marks)
              + "]\n")
    out.write("}\n")


def write_runs(out, entries):
    items = [f"0x{start:06X}_{value:02X}" for start, value in entries]
    for start in range(0, len(items), 8):
        out.write("        " + ", ".join(items[start:start + 8]) + ",\n")


if __name__ == "__main__":
    main()
