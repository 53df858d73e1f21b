import RosterProtocol

/// The state of an interactive form: what the daemon last said about each field, the local editors, the focus.
///
/// Pure, so it is tested with keys and events alone. It never decides validity itself: every verdict, the
/// enabled flags and `submittable` come from the daemon's events; the screen only refuses to edit what the
/// daemon disabled and to submit what it has not called submittable.
struct FormScreen: Equatable {
    /// One input line and the daemon's latest word on it.
    struct Field: Equatable {
        let name: String
        var editor = LineEditor()
        var masked: Bool
        var enabled: Bool
        var state: String
        var code: String
        var message: String
        var rev: Int64
    }

    /// Where keys go: a field, or the submit button under the fields.
    enum Focus: Equatable {
        case field(Int)
        case submit
    }

    /// The submit's progress as the `submit` events and the answer report it.
    enum SubmitState: Equatable {
        case idle
        case running(String)
        case failed(String)
        case succeeded(String)
    }

    /// What the runner must do after a key.
    enum Action: Equatable {
        case input(field: String, value: String)
        case submit
        case cancel
        case redraw
    }

    /// Fields that hold a password, drawn as `•`; a one-time `code` is shown, as authenticator apps show it.
    static let maskedFields: Set<String> = ["password", "confirm", "current", "new"]

    let form: String
    var fields: [Field]
    var focus: Focus = .submit
    var submittable: Bool
    var submit: SubmitState = .idle

    /// Builds the screen from `form.open`'s snapshot; nil if the answer is not shaped like one.
    init?(form: String, snapshot: JSONValue) {
        guard let items = snapshot["fields"]?.arrayValue else { return nil }
        self.form = form
        fields = items.compactMap { item in
            guard let name = item["name"]?.stringValue else { return nil }
            return Field(name: name, masked: FormScreen.maskedFields.contains(name),
                         enabled: item["enabled"]?.boolValue ?? false, state: item["state"]?.stringValue ?? "empty",
                         code: item["code"]?.stringValue ?? "", message: item["message"]?.stringValue ?? "",
                         rev: item["rev"]?.int64Value ?? 0)
        }
        submittable = snapshot["submittable"]?.boolValue ?? false
        focus = fields.firstIndex(where: \.enabled).map(Focus.field) ?? .submit
    }

    var isSubmitting: Bool {
        if case .running = submit { return true }
        return false
    }

    var focusedField: Int? {
        if case .field(let index) = focus { return index }
        return nil
    }

    // MARK: keys

    mutating func handle(_ key: Key) -> [Action] {
        switch key {
        case .interrupt, .escape: return [.cancel]
        case .redraw: return [.redraw]
        case .tab, .down: moveFocus(by: 1)
        case .backTab, .up: moveFocus(by: -1)
        case .enter:
            if submittable && !isSubmitting {
                submit = .running("")
                return [.submit]
            }
            // Not ready yet: Enter behaves as "next field", which is what a person filling the form wants.
            if focus != .submit { moveFocus(by: 1) }
        case .endOfInput:
            guard let index = focusedField, fields[index].editor.characters.isEmpty else { return edit(key) }
            return [.cancel]
        case .text, .left, .right, .home, .end, .backspace, .delete, .lineStart, .lineEnd, .killToStart, .killWord,
             .killToEnd:
            return edit(key)
        }
        return []
    }

    private mutating func edit(_ key: Key) -> [Action] {
        guard let index = focusedField, fields[index].enabled, !isSubmitting else { return [] }
        switch fields[index].editor.apply(key) {
        case .edited:
            if case .failed = submit { submit = .idle }
            return [.input(field: fields[index].name, value: fields[index].editor.text)]
        case .moved, .ignored:
            return []
        }
    }

    /// Moves to the next (or previous) enabled field or the button, wrapping; disabled fields are skipped.
    mutating func moveFocus(by step: Int) {
        let stops = fields.indices.filter { fields[$0].enabled }.map(Focus.field) + [.submit]
        guard let current = stops.firstIndex(of: focus) else {
            // The focused field was disabled under us: go to the nearest stop in the direction of travel.
            let index = focusedField ?? fields.count
            let later = stops.first { stop in
                if case .field(let other) = stop { return step > 0 ? other > index : other < index }
                return step > 0
            }
            focus = later ?? .submit
            return
        }
        focus = stops[(current + step + stops.count) % stops.count]
    }

    // MARK: events

    /// Applies one event's params; events for other forms and stale revisions change nothing.
    mutating func apply(event: JSONValue) {
        guard event["form"]?.stringValue == form else { return }
        switch event["type"]?.stringValue {
        case "field"?:
            guard let name = event["field"]?.stringValue, let index = fields.firstIndex(where: { $0.name == name }) else { return }
            let rev = event["rev"]?.int64Value ?? fields[index].rev
            guard rev >= fields[index].rev else { return }
            fields[index].rev = rev
            fields[index].state = event["state"]?.stringValue ?? fields[index].state
            fields[index].code = event["code"]?.stringValue ?? fields[index].code
            fields[index].message = event["message"]?.stringValue ?? fields[index].message
            fields[index].enabled = event["enabled"]?.boolValue ?? fields[index].enabled
        case "form"?:
            submittable = event["submittable"]?.boolValue ?? submittable
        case "submit"?:
            let message = event["message"]?.stringValue ?? ""
            switch event["state"]?.stringValue {
            case "running"?: submit = .running(message)
            case "failed"?: submit = .failed(message)
            case "succeeded"?: submit = .succeeded(message)
            default: break
            }
        default:
            break
        }
    }

    /// The answer to `form.submit` failed: show why and let the person fix it.
    ///
    /// After `code_required` the next thing to type is the one-time code, so the focus goes there (its `field`
    /// event enables it; until then keys to it are refused like any disabled field's).
    mutating func submitFailed(_ message: String, reason: String = "") {
        submit = .failed(message)
        if reason == "code_required", let index = fields.firstIndex(where: { $0.name == "code" }) {
            focus = .field(index)
        }
    }
}
