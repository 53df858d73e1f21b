// RosterFuzzTargets — each parser that reads outside data, fed straight from a fuzzer's bytes.
//
// RULES
//   One target per parser, named as its corpus directory is (`Fuzz/corpus/<name>/`). A target never traps on
//   its own account: it runs the parser and returns the properties the result broke, so the same function serves
//   libFuzzer (`roster-fuzz-parsers`, which traps on a broken property so the input is kept as a crash) and the
//   plain test that replays every corpus file (which names the file and the property).
//   Text parsers get the bytes as UTF-8 with invalid sequences replaced, which is what they are handed in the
//   daemon: a request's strings and a config file are valid UTF-8 by the time a parser sees them.
//   Properties are only ones the parser's own documentation promises (a round trip, a canonical form, a line
//   number inside the text), so a report is a bug in the parser, never in the harness's guess.

import RosterCore
import RosterCrypto
import RosterPostgres
import RosterProtocol

/// A parser that a fuzzer can drive, and the name its corpus goes by.
public enum ParserTarget: String, CaseIterable, Sendable {
    /// `contacts.import` with `format: "vcard"` (RFC 6350 reader).
    case vcard
    /// `contacts.import` with `format: "csv"` (RFC 4180 reader).
    case csv
    /// A request line: the JSON parser, the envelope rules and the fast scanner of plain requests.
    case json
    /// The newline framer every connection's bytes pass through.
    case framer
    /// A configuration file: the INI syntax and every key's value.
    case ini
    /// A PostgreSQL connection string, as masked for logs and as read from the configuration.
    case conninfo
    /// `session.hello`'s `remote`, the address a trusted gateway speaks for.
    case remote
    /// Base32 as written for TOTP secrets, and recovery codes as typed back.
    case base32
    /// What another daemon on the same PostgreSQL database announced (change and audit payloads).
    case notify
    /// A mailbox and a links' base as the configuration writes them, and a mail about a username and to a display
    /// name of the same text: its headers are exactly the ones it should have and read back as what was written.
    case mail
    /// A passkey response (registration or assertion) as the WebAuthn verifier reads it, libcbor and libfido2 included.
    case webauthn
    /// `contacts.put_vcard`'s card (`VCard.read(card:)`, and contacts.update's rewrite of it), and the change token
    /// and etag texts (`ContactRevision`) of `contacts.changes` and the `if_match` params.
    case card

    /// The properties `bytes` broke, empty when the parser held to its rules.
    public func run(_ bytes: [UInt8]) -> [String] {
        switch self {
        case .vcard: Self.vcard(bytes)
        case .csv: Self.csv(bytes)
        case .json: Self.json(bytes)
        case .framer: Self.framer(bytes)
        case .ini: Self.ini(bytes)
        case .conninfo: Self.conninfo(bytes)
        case .remote: Self.remote(bytes)
        case .base32: Self.base32(bytes)
        case .notify: Self.notify(bytes)
        case .mail: MailTarget.run(bytes)
        case .webauthn: WebAuthnTarget.run(bytes)
        case .card: Self.card(bytes)
        }
    }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Physical lines as the import counts them (CRLF, LF or a lone CR ends one).
    private static func lineCount(_ text: String) -> Int {
        var count = 1
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            if scalar == "\n" && previous != "\r" || scalar == "\r" { count += 1 }
            previous = scalar
        }
        return count
    }

    private static func importBroke(_ result: ContactImportResult, text: String, format: String,
                                    reparse: (String) -> ContactImportResult,
                                    serialize: ([ContactDraft]) -> String) -> [String] {
        var broken: [String] = []
        let lines = lineCount(text)
        if let bad = result.errors.first(where: { !(1...lines).contains($0.line) }) {
            broken.append("\(format): error line \(bad.line) outside 1...\(lines)")
        }
        if let bad = result.contacts.first(where: { !(1...lines).contains($0.line) }) {
            broken.append("\(format): contact line \(bad.line) outside 1...\(lines)")
        }
        // protocol.md, contacts.export: export followed by import reproduces the list.
        let again = reparse(serialize(result.drafts))
        if !again.errors.isEmpty || again.drafts != result.drafts {
            broken.append("\(format): exporting what was imported and importing it again changed it")
        }
        return broken
    }

    private static func vcard(_ bytes: [UInt8]) -> [String] {
        let text = text(bytes)
        return importBroke(VCard.parse(text), text: text, format: "vcard", reparse: { VCard.parse($0) },
                           serialize: { VCard.serialize(drafts: $0) })
    }

    /// ContactRevision's promise: a text it reads is the one canonical text of its number. VCard.read's: what it
    /// takes is at most `maxCardBytes` and valid fields; the rewrite's: a card rewritten with the fields read from
    /// it reads back as those fields.
    private static func card(_ bytes: [UInt8]) -> [String] {
        let text = text(bytes)
        var broken: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let revision = ContactRevision.revision(token: line), ContactRevision.token(revision) != line {
                broken.append("card: token \(revision) reads from a text that is not its own")
            }
            if let revision = ContactRevision.revision(etag: line), ContactRevision.etag(revision) != line {
                broken.append("card: etag \(revision) reads from a text that is not its own")
            }
        }
        guard case .success(let content) = VCard.read(card: text) else { return broken }
        if text.utf8.count > VCard.maxCardBytes { broken.append("card: took a card past its size") }
        if (try? content.draft.validate()) == nil { broken.append("card: took fields that break a contact rule") }
        // From an empty draft every field counts as changed, so every field's line is rewritten.
        let rewritten = VCard.rewritten(text, from: ContactDraft(name: ""), to: content.draft)
        guard case .success(let again) = VCard.read(card: rewritten), again.draft == content.draft else {
            return broken + ["card: the card rewritten with its own fields reads otherwise"]
        }
        return broken
    }

    private static func csv(_ bytes: [UInt8]) -> [String] {
        let text = text(bytes)
        return importBroke(ContactCSV.parse(text), text: text, format: "csv", reparse: ContactCSV.parse,
                           serialize: { ContactCSV.serialize(drafts: $0) })
    }

    private static func json(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let strict = Result { () throws(JSONParser.Failure) in try JSONParser.parse(bytes) }
        let lenient = Result { () throws(JSONParser.Failure) in try JSONParser.parseKeepingDuplicateKeys(bytes) }
        switch (strict, lenient) {
        case (.success(let value), .success(let kept)):
            if kept.duplicateKey != nil { broken.append("json: accepted a document with a repeated key") }
            if kept.value != value { broken.append("json: the two parses disagree") }
            let written = JSONWriter.encode(value)
            if (try? JSONParser.parse(written)) != value { broken.append("json: writing and reading back changed it") }
        case (.failure, .success(let kept)):
            if kept.duplicateKey == nil { broken.append("json: refused a document the lenient parse took whole") }
        case (.success, .failure):
            broken.append("json: the lenient parse refused what the strict one took")
        case (.failure, .failure):
            break
        }
        _ = RPCRequest.parse(line: bytes)
        // PlainRequest's promise: on every line it accepts, the general parser gives exactly these values.
        let plain = bytes.withUnsafeBufferPointer {
            PlainRequest.scan($0, method: "users.check_username", param: "username")
        }
        if let plain {
            guard plain.id.upperBound <= bytes.count, plain.value.upperBound <= bytes.count,
                  case .success(let request) = RPCRequest.parse(line: bytes) else {
                return broken + ["json: the plain scanner took a line the general parser refuses"]
            }
            let id = try? JSONParser.parse(bytes[plain.id])
            let value = text(Array(bytes[plain.value]))
            let params = request.params.filter { $0.0 == "username" }.map(\.1)
            if request.method != "users.check_username" || request.id != id || params != [.string(value)] {
                broken.append("json: the plain scanner and the general parser read different values")
            }
        }
        return broken
    }

    /// The first byte picks the chunk size (1...256) the rest is fed in; a small line limit reaches its edges.
    private static func framer(_ bytes: [UInt8]) -> [String] {
        let maxLineBytes = 32
        let chunkSize = Int(bytes.first ?? 0) + 1
        let stream = Array(bytes.dropFirst())

        enum Seen: Equatable { case line([UInt8]), tooLarge }
        func run(chunks: Int, borrowing: Bool) -> (seen: [Seen], overBudget: Bool) {
            var framer = LineFramer(maxLineBytes: maxLineBytes)
            var seen: [Seen] = []
            var overBudget = false
            var start = 0
            while start < stream.count {
                let end = min(start + chunks, stream.count)
                let chunk = Array(stream[start..<end])
                var outputs: [LineFramer.Output] = []
                chunk.withUnsafeBytes { raw in
                    if borrowing { framer.feedBorrowing(raw, into: &outputs) } else { framer.feed(raw, into: &outputs) }
                }
                for output in outputs {
                    switch output {
                    case .line(let line): seen.append(.line(line))
                    case .span(let range):
                        if range.lowerBound >= 0, range.upperBound <= chunk.count {
                            seen.append(.line(Array(chunk[range])))
                        } else {
                            overBudget = true
                        }
                    case .tooLarge: seen.append(.tooLarge)
                    }
                }
                if framer.bufferedByteCount > maxLineBytes + 1 { overBudget = true }
                start = end
            }
            var outputs: [LineFramer.Output] = []
            framer.finish(into: &outputs)
            for output in outputs {
                switch output {
                case .line(let line): seen.append(.line(line))
                case .span: overBudget = true
                case .tooLarge: seen.append(.tooLarge)
                }
            }
            return (seen, overBudget)
        }

        var broken: [String] = []
        let whole = run(chunks: max(stream.count, 1), borrowing: false)
        let split = run(chunks: chunkSize, borrowing: false)
        let borrowed = run(chunks: chunkSize, borrowing: true)
        if whole.overBudget || split.overBudget || borrowed.overBudget {
            broken.append("framer: held more than the limit, or gave a span outside its chunk")
        }
        if split.seen != whole.seen { broken.append("framer: \(chunkSize)-byte chunks framed differently") }
        if borrowed.seen != whole.seen { broken.append("framer: borrowing framed differently") }
        for case .line(let line) in whole.seen where line.count > maxLineBytes || line.contains(0x0A) {
            broken.append("framer: a line past the limit or holding a newline")
        }
        return broken
    }

    private static func ini(_ bytes: [UInt8]) -> [String] {
        let text = text(bytes)
        let lines = lineCount(text)
        var broken: [String] = []
        do {
            let entries = try IniParser.parse(text, path: "fuzz.conf")
            if let bad = entries.first(where: { !(1...lines).contains($0.line) || $0.key.isEmpty }) {
                broken.append("ini: entry \(bad.key) at line \(bad.line) of \(lines)")
            }
        } catch {
            if !(1...lines).contains(error.line) { broken.append("ini: error at line \(error.line) of \(lines)") }
        }
        do {
            _ = try DaemonConfig.parse(files: [(path: "fuzz.conf", text: text)])
        } catch {
            // 0 is a failure of no single line (a minimum above its maximum), as ConfigError says.
            if !(0...lines).contains(error.line) {
                broken.append("ini: config error at line \(error.line) of \(lines)")
            }
        }
        return broken
    }

    private static func conninfo(_ bytes: [UInt8]) -> [String] {
        let text = text(bytes)
        var broken: [String] = []
        let masked = Conninfo.masked(text)
        let isURI = text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
        // Only a password is ever replaced: a keyword string naming none comes back as written.
        if !isURI, !text.lowercased().contains("password"), masked != text {
            broken.append("conninfo: changed a string that holds no password")
        }
        // The configuration reads it as one value; a line break would start another assignment.
        let oneLine = String(text.unicodeScalars.filter { $0 != "\n" && $0 != "\r" }.map(Character.init))
        _ = try? DaemonConfig.parse(files: [(path: "fuzz.conf", text: "[PostgreSQL]\nConnection=" + oneLine + "\n")])
        return broken
    }

    private static func remote(_ bytes: [UInt8]) -> [String] {
        guard let address = RemoteAddress(parsing: text(bytes)) else { return [] }
        var broken: [String] = []
        let canonical = address.text
        if RemoteAddress(parsing: canonical) != address { broken.append("remote: its canonical text reads as another") }
        if canonical.utf8.count > 39 { broken.append("remote: canonical text longer than any address needs") }
        if RemoteAddress(parsing: address.limitNetwork.text) != address.limitNetwork {
            broken.append("remote: its limit network does not read back")
        }
        _ = address.limitKey
        return broken
    }

    private static func base32(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        let encoded = Array(TOTP.base32(bytes).utf8)
        if encoded.count != (bytes.count * 8 + 4) / 5 { broken.append("base32: wrong length") }
        if !encoded.allSatisfy({ (0x41...0x5A).contains($0) || (0x32...0x37).contains($0) }) {
            broken.append("base32: a character outside the alphabet")
        }
        if let normalized = RecoveryCodes.normalize(text(bytes)) {
            let kept = Array(normalized.utf8)
            if kept.count != RecoveryCodes.characters
                || !kept.allSatisfy({ (0x61...0x7A).contains($0) || (0x32...0x37).contains($0) }) {
                broken.append("recovery code: normalized to something that is no code")
            }
        }
        // A code as issued (10 bytes, lower case) and typed back in upper case reads as itself.
        if bytes.count >= RecoveryCodes.byteLength {
            let code = TOTP.base32(Array(bytes.prefix(RecoveryCodes.byteLength)))
            if RecoveryCodes.normalize(code) != code.lowercased() {
                broken.append("recovery code: a code as issued does not normalize to itself")
            }
        }
        return broken
    }

    /// A payload read back must be written as one that reads the same: what `parse` takes is what `payload` writes.
    private static func notify(_ bytes: [UInt8]) -> [String] {
        let text = text(bytes)
        var broken: [String] = []
        if let change = try? ChangeNotification.parse(text) {
            if let again = change.payload, (try? ChangeNotification.parse(again)) != change {
                broken.append("notify: a change written back reads as another")
            }
        }
        if AuditNotification.isAudit(text), case .entry(let entry)? = try? AuditNotification.parse(text).heard,
           let origin = try? AuditNotification.parse(text).origin {
            let parts = AuditNotification.payload(for: entry.record, origin: origin)
            let again = parts.head + "\(entry.id) \(entry.timeMs)" + parts.tail
            if let heard = try? AuditNotification.parse(again), heard.origin != origin
                || (heard.heard != .entry(entry) && heard.heard != .stored(id: entry.id)) {
                broken.append("notify: an audit entry written back reads as another")
            } else if (try? AuditNotification.parse(again)) == nil {
                broken.append("notify: an audit entry written back does not read")
            }
        }
        return broken
    }
}
