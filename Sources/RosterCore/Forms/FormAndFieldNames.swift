/// The forms a session can open (protocol.md "form.open"); the raw value is the wire name.
public enum FormName: String, CaseIterable, Sendable {
    case register
    case login
    case contacts
    /// A logged-in session's password change (protocol.md "Password form").
    case password
}

/// A field's name on the wire: what `form.input {field}` carries and field events, snapshots and `invalid_field`
/// name. It spans every form, so it is only a name: each form maps it to its own field enum (`RegisterField`,
/// `LoginField`, `PasswordField`) at its edge and answers `unknown_field` for a name it does not have.
public enum FieldName: String, CaseIterable, Sendable {
    case username
    case password
    case confirm
    case email
    case query
    /// The password form's current password.
    case current
    /// The password form's new password.
    case new
    /// The login form's one-time (TOTP) code.
    case code
}
