/// One field as `form.open` answers it.
public struct FieldSnapshot: Equatable, Sendable {
    public var name: FieldName
    public var enabled: Bool
    public var state: FieldState
    public var code: FieldCode
    public var rev: Int

    public init(name: FieldName, enabled: Bool, state: FieldState, code: FieldCode, rev: Int) {
        self.name = name
        self.enabled = enabled
        self.state = state
        self.code = code
        self.rev = rev
    }
}

/// A form as `form.open` answers it: the same values its latest events told the client.
public struct FormSnapshot: Equatable, Sendable {
    public var form: FormName
    public var fields: [FieldSnapshot]
    public var submittable: Bool

    public init(form: FormName, fields: [FieldSnapshot], submittable: Bool) {
        self.form = form
        self.fields = fields
        self.submittable = submittable
    }
}
