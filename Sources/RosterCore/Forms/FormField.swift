/// One form's own fields: each form has an enum of exactly its fields, in the form's order, so its rulebook
/// switches over them exhaustively and can never be handed another form's field. The wire speaks `FieldName`;
/// `init?(_:)` and `name` are the only crossings between the two.
public protocol FormField: CaseIterable, Hashable, Sendable where AllCases == [Self] {
    /// The form's field with this wire name; nil for a name the form does not have.
    init?(_ name: FieldName)
    /// The field's wire name.
    var name: FieldName { get }
    /// Every field code this field can show; each has a message in every locale.
    var possibleCodes: [FieldCode] { get }
}
