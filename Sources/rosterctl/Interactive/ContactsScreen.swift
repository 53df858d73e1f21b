import RosterProtocol

/// The state of the live contact search: the query being typed, the daemon's latest results, the selection.
///
/// Pure, so it is tested with keys and events alone. It never searches itself: what is listed is always the
/// daemon's last `results` event, which may lag the query while the daemon throttles.
struct ContactsScreen: Equatable {
    /// What the runner must do after a key.
    enum Action: Equatable {
        case input(String)
        case choose(ContactRecord)
        case cancel
        case redraw
    }

    var editor = LineEditor()
    /// The daemon's hint for the empty query ("Search by name, initials, pinyin or phone").
    var placeholder: String
    var items: [ContactRecord] = []
    /// How many contacts match in all; `items` holds only the first of them.
    var total = 0
    /// The query `items` are for; nil until the first results arrive.
    var resultsQuery: String?
    var selected = 0
    /// The daemon ended the session (a `session` event with `user: null`, or the contacts form closed): the
    /// screen has nothing left to show.
    var sessionEnded = false

    /// Builds the screen from `form.open`'s snapshot of the contacts form.
    init(snapshot: JSONValue) {
        let field = snapshot["fields"]?.arrayValue?.first { $0["name"] == "query" }
        placeholder = field?["message"]?.stringValue ?? ""
    }

    /// Whether what is listed is for what is typed (false while the daemon's answer to the last key is due).
    var isCurrent: Bool { resultsQuery == editor.text }

    var selectedContact: ContactRecord? { items.indices.contains(selected) ? items[selected] : nil }

    mutating func handle(_ key: Key) -> [Action] {
        switch key {
        case .interrupt, .escape: return [.cancel]
        case .redraw: return [.redraw]
        case .up, .backTab: selected = max(selected - 1, 0)
        case .down, .tab: selected = max(min(selected + 1, items.count - 1), 0)
        case .enter: return selectedContact.map { [.choose($0)] } ?? []
        case .endOfInput where editor.characters.isEmpty: return [.cancel]
        case .endOfInput, .text, .left, .right, .home, .end, .backspace, .delete, .lineStart, .lineEnd, .killToStart,
             .killWord, .killToEnd:
            if editor.apply(key) == .edited { return [.input(editor.text)] }
        }
        return []
    }

    /// Takes a `results` event of the contacts form, or the end of the session; anything else changes nothing.
    ///
    /// A new query starts the selection at the best match; fresh results for the same query (a contact changed
    /// somewhere) keep the selected contact if it is still listed, so the highlight does not jump under the user.
    mutating func apply(event: JSONValue) {
        if (event["type"] == "session" && event["user"] == .null)
            || (event["type"] == "form" && event["form"] == "contacts" && event["closed"] == true) {
            sessionEnded = true
            return
        }
        guard event["type"] == "results", event["form"] == "contacts" else { return }
        let keep = event["query"]?.stringValue == resultsQuery ? selectedContact?.id : nil
        items = ContactRecord.list(event["items"])
        total = Int(event["total"]?.int64Value ?? Int64(items.count))
        resultsQuery = event["query"]?.stringValue ?? ""
        selected = keep.flatMap { id in items.firstIndex { $0.id == id } } ?? 0
    }
}
