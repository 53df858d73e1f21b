/// The fields of one form, a slot each, in the form's order; keyed by the form's own field enum, so a form's
/// table cannot be asked about another form's field.
public struct FieldTable<Field: FormField>: Sendable {
    let order: [Field]
    private var slots: [Field: FieldSlot]

    init(enabled: (Field) -> Bool) {
        order = Field.allCases
        var slots: [Field: FieldSlot] = [:]
        for field in order { slots[field] = FieldSlot(enabled: enabled(field)) }
        self.slots = slots
    }

    subscript(field: Field) -> FieldSlot {
        // `init` gave every field a slot; the default only answers the dictionary's optional.
        get { slots[field, default: FieldSlot(enabled: false)] }
        set { slots[field] = newValue }
    }
}
