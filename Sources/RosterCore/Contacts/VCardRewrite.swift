// VCardRewrite — contacts.update of a contact whose card a client sent: the card's FN, N, first TEL, first
// EMAIL and NOTE say the new fields, and every other byte stays as it was (PHOTO, X- properties, groups, the
// line endings and the folding of untouched lines).
//
// RULES
//   A rewritten property keeps its group and parameters (`item1.TEL;type=CELL:`) and gets the new value, escaped
//   and folded at 75 octets with the card's own line ending (CRLF when the card has one, LF otherwise).
//   Only what the update changed is touched: a new name rewrites FN and N, a new phone the first TEL, a new email
//   the first EMAIL, a new note NOTE. So a note's update leaves the client's structured N (family; given; middle)
//   and a TEL Roster could not take as a phone as they were. FN, N and NOTE: the first is rewritten and any
//   others removed. TEL and EMAIL: only the first is rewritten. A cleared field's line is removed; a field the
//   card lacks is added just before END:VCARD.

extension VCard {
    /// `card`, whose fields were `old`, saying `draft`'s; see the rules above.
    public static func rewritten(_ card: String, from old: ContactDraft, to draft: ContactDraft) -> String {
        var changed = Set<String>()
        if old.name != draft.name { changed.formUnion(["FN", "N"]) }
        if old.phone != draft.phone { changed.insert("TEL") }
        if old.email != draft.email { changed.insert("EMAIL") }
        if old.note != draft.note { changed.insert("NOTE") }
        guard !changed.isEmpty else { return card }
        let ending = card.contains("\r\n") ? "\r\n" : "\n"
        let lines = RawCardLine.split(card)
        var done = Set<String>()
        var output = ""
        output.reserveCapacity(card.utf8.count + 256)
        func emit(_ name: String, head: String) {
            guard let value = value(of: name, in: draft) else { return }
            output += fold(head + ":" + value, ending: ending)
        }
        for line in lines {
            guard let name = line.name else {
                output += line.raw
                continue
            }
            // A field the update did not change keeps its lines as they were.
            if !changed.contains(name) && ["FN", "N", "NOTE", "TEL", "EMAIL"].contains(name) {
                output += line.raw
                continue
            }
            switch name {
            case "FN", "N", "NOTE", "TEL", "EMAIL":
                if done.insert(name).inserted {
                    emit(name, head: line.head)
                } else if name == "TEL" || name == "EMAIL" {
                    output += line.raw
                }
            case "END":
                for missing in ["FN", "N", "TEL", "EMAIL", "NOTE"] where changed.contains(missing) && !done.contains(missing) {
                    emit(missing, head: missing)
                    done.insert(missing)
                }
                output += line.raw
            default:
                output += line.raw
            }
        }
        return output
    }

    private static func value(of name: String, in draft: ContactDraft) -> String? {
        switch name {
        case "FN": VCardText.escape(draft.name)
        case "N": VCardName.components(of: draft.name).map(VCardText.escape).joined(separator: ";")
        case "TEL": draft.phone.map(VCardText.escape)
        case "EMAIL": draft.email.map(VCardText.escape)
        case "NOTE": draft.note.map(VCardText.escape)
        default: nil
        }
    }

    /// `VCardText.fold` with the card's line ending instead of CRLF.
    private static func fold(_ line: String, ending: String) -> String {
        let folded = VCardText.fold(line)
        return ending == "\r\n" ? folded : folded.replacingCRLF(with: ending)
    }
}

/// One logical line of a card as it stands in the text: its raw bytes (continuation lines and line endings
/// included), and for a content line its property name (upper case, without group) and head (all before the
/// value's colon).
struct RawCardLine {
    var raw: String
    var name: String?
    var head: String

    /// The card's logical lines, whose raw texts joined are the card.
    static func split(_ card: String) -> [RawCardLine] {
        var lines: [RawCardLine] = []
        var physical: [String] = []
        var current = ""
        var previousCR = false
        for scalar in card.unicodeScalars {
            if previousCR && scalar != "\n" {
                physical.append(current)
                current = ""
            }
            current.unicodeScalars.append(scalar)
            previousCR = scalar == "\r"
            if scalar == "\n" {
                physical.append(current)
                current = ""
                previousCR = false
            }
        }
        if !current.isEmpty { physical.append(current) }
        for text in physical {
            if let first = text.unicodeScalars.first, first == " " || first == "\t", let last = lines.indices.last {
                lines[last].raw += text
            } else {
                lines.append(RawCardLine(raw: text, name: nil, head: ""))
            }
        }
        return lines.map { line in
            var line = line
            let unfolded = VCardLine.logicalLines(line.raw).first?.scalars ?? []
            if let property = VCardLine(unfolded, line: 0) {
                line.name = property.name
                line.head = String(String.UnicodeScalarView(unfolded.prefix(unfolded.count - property.value.count - 1)))
            }
            return line
        }
    }
}

extension String {
    /// Every CRLF replaced by `ending`.
    func replacingCRLF(with ending: String) -> String {
        var result = ""
        var previousCR = false
        for scalar in unicodeScalars {
            if previousCR {
                if scalar == "\n" {
                    result += ending
                    previousCR = false
                    continue
                }
                result.unicodeScalars.append("\r")
            }
            previousCR = scalar == "\r"
            if !previousCR { result.unicodeScalars.append(scalar) }
        }
        if previousCR { result.unicodeScalars.append("\r") }
        return result
    }
}
