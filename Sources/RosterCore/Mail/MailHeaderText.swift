// MailHeaderText — free text written into a header so that it reads back as itself and can add nothing.
//
// RULES
//   A header line is at most 78 characters before its CRLF (RFC 5322 §2.1.1), folded by CRLF + space.
//   A subject that is printable ASCII, single-spaced, holds no `=?` and fits on its line is written as it is;
//   any other is RFC 2047 encoded-words, `=?utf-8?B?…?=`, base64 by Foundation's encoder: each word encodes at
//   most 42 bytes of whole characters (never half of a UTF-8 sequence, and a grapheme kept whole when it fits),
//   so a word is at most 68 characters and `Subject: ` plus one still fits a line; every later word goes on a
//   continuation line of its own.
//   A display name of plain atoms is written as it is, folded between its words. Any other is one encoded-word
//   of at most 45 bytes (cut after whole characters, with "…", when longer): readers disagree on the space
//   between two encoded-words in a name, and one word leaves nothing to disagree on.
//   Nothing written holds a byte outside printable ASCII but the CRLF of a fold: the caller has refused control
//   characters already, and an encoded-word carries the rest as base64.

import Foundation

/// Writes header values as RFC 5322 lines: plain where that reads back exactly, RFC 2047 encoded-words otherwise.
enum MailHeaderText {
    /// The longest line wanted, CRLF not counted.
    static let lineLimit = 78
    /// Bytes of text in one encoded-word: 56 base64 characters, 68 with `=?utf-8?B?` and `?=`.
    static let wordBytes = 42

    /// `Name: value` with its folds, ending in CRLF, for unstructured text (the subject).
    static func unstructured(name: String, _ value: String) -> String {
        if value.isEmpty { return name + ":\r\n" }
        let head = name + ": "
        if isPlainText(value), head.utf8.count + value.utf8.count <= lineLimit {
            return head + value + "\r\n"
        }
        return head + encodedWords(value).joined(separator: "\r\n ") + "\r\n"
    }

    /// `Name: mailbox` with its folds, ending in CRLF: atoms, or one encoded-word, then `<address>`.
    static func mailbox(name: String, _ mailbox: MailMailbox) -> String {
        let head = name + ": "
        guard let displayName = mailbox.displayName else { return head + mailbox.address.text + "\r\n" }
        let angle = "<" + mailbox.address.text + ">"
        var lines = atomLines(displayName, firstLineTaken: head.utf8.count)
            ?? [encodedWords(shownDisplayName(displayName), wordBytes: oneWordBytes).joined()]
        let last = lines.count == 1 ? head.utf8.count + lines[0].utf8.count : 1 + (lines.last?.utf8.count ?? 0)
        if last + 1 + angle.utf8.count <= lineLimit {
            lines[lines.count - 1] += " " + angle
        } else {
            lines.append(angle)
        }
        return head + lines.joined(separator: "\r\n ") + "\r\n"
    }

    /// Bytes of a display name that one encoded-word holds: 60 base64 characters, 72 with its delimiters, which
    /// fits a line after `From: `.
    static let oneWordBytes = 45

    /// A display name as the header shows it. Readers disagree on the space between two encoded-words in a name
    /// (RFC 2047 drops it, Python's `email` keeps it), so a name that needs encoding is one word: whole when it
    /// fits, else cut after whole characters and ended with "…". Plain atoms are folded, never cut.
    static func shownDisplayName(_ name: String) -> String {
        guard atomLines(name, firstLineTaken: 0) == nil, name.utf8.count > oneWordBytes else { return name }
        let room = oneWordBytes - "…".utf8.count
        var kept = ""
        var used = 0
        for character in name {
            let size = String(character).utf8.count
            if used + size > room { break }
            kept.append(character)
            used += size
        }
        if kept.isEmpty {
            // One character longer than a word (a run of combining marks) is cut between its scalars.
            for scalar in name.unicodeScalars {
                let size = String(scalar).utf8.count
                if used + size > room { break }
                kept.unicodeScalars.append(scalar)
                used += size
            }
        }
        return kept + "…"
    }

    /// A name of plain atoms folded between its words; nil when it is not one or a word cannot fit a line.
    private static func atomLines(_ value: String, firstLineTaken: Int) -> [String]? {
        guard isPlainText(value) else { return nil }
        let words = value.utf8.split(separator: 0x20)
        guard words.allSatisfy({ $0.allSatisfy(MailAddress.isAtext) && $0.count < lineLimit - 6 }) else { return nil }
        var lines: [String] = []
        var current = ""
        var taken = firstLineTaken
        for word in words.map({ String(decoding: $0, as: UTF8.self) }) {
            if current.isEmpty {
                current = word
            } else if taken + current.utf8.count + 1 + word.utf8.count <= lineLimit {
                current += " " + word
            } else {
                lines.append(current)
                current = word
                taken = 1
            }
        }
        return lines + [current]
    }

    /// Printable ASCII, no leading, trailing or doubled space, and no `=?` that a reader would try to decode.
    static func isPlainText(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard let first = bytes.first, let last = bytes.last, first != 0x20, last != 0x20 else { return false }
        var previous: UInt8 = 0
        for byte in bytes {
            guard (0x20...0x7E).contains(byte) else { return false }
            if byte == 0x20, previous == 0x20 { return false }
            if byte == UInt8(ascii: "?"), previous == UInt8(ascii: "=") { return false }
            previous = byte
        }
        return true
    }

    /// The text as encoded-words of whole characters, in order (non-empty text: an empty word reads as a defect).
    static func encodedWords(_ value: String, wordBytes: Int = wordBytes) -> [String] {
        var chunks: [[UInt8]] = []
        var current: [UInt8] = []
        func add(_ piece: [UInt8]) {
            if current.count + piece.count > wordBytes, !current.isEmpty {
                chunks.append(current)
                current = []
            }
            current += piece
        }
        for character in value {
            let bytes = Array(String(character).utf8)
            if bytes.count <= wordBytes {
                add(bytes)
            } else {
                // A grapheme longer than a word (a long run of combining marks) is split between its scalars.
                for scalar in character.unicodeScalars { add(Array(String(scalar).utf8)) }
            }
        }
        chunks.append(current)
        return chunks.map { "=?utf-8?B?" + Data($0).base64EncodedString() + "?=" }
    }
}
