extension FieldName {
    /// The field whose messages word a method param's `invalid_field` when the param has no text of its own: for
    /// a new password (`new` of `account.change_password`, `new_password` of `auth.recover`) the register form's
    /// `password`, whose rules judged it; else the field of that name.
    public static func wording(param: String) -> FieldName? {
        // First, so that it holds once the password form's `new` field exists too: the form's own texts for `new`
        // are found by key before this is asked.
        ["new", "new_password"].contains(param) ? .password : FieldName(rawValue: param)
    }
}
