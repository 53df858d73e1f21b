extension FieldName {
    /// The field whose messages word a method param's `invalid_field`: the field of that name, or for a method's
    /// new password (`new` of `account.change_password`, `new_password` of `auth.recover`) the register form's
    /// `password`, whose rules judged it.
    public static func wording(param: String) -> FieldName? {
        FieldName(rawValue: param) ?? (["new", "new_password"].contains(param) ? .password : nil)
    }
}
