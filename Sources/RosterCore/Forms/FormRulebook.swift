/// What a rulebook says about a field's committed value: a verdict now, or a check to run.
enum FieldEvaluation: Equatable, Sendable {
    case settled(FieldVerdict)
    case check(Check)
}

/// The form-specific half of a form machine: which fields, which rules, what submitting means.
/// `FormKernel` owns the timing (debounce, flatMapLatest, emission) and asks the rulebook everything else.
protocol FormRulebook: Sendable {
    static var form: FormName { get }
    static var fields: [FieldName] { get }

    var policy: Policy { get set }

    func evaluate(_ field: FieldName, in table: FieldTable) -> FieldEvaluation
    /// Enablement is a function of the other fields' latest final verdicts.
    func isEnabled(_ field: FieldName, in table: FieldTable) -> Bool
    /// A pure function of settled states; a field whose latest input is unchecked counts as not settled.
    func isSubmittable(_ table: FieldTable) -> Bool
    /// Fields judged against `field`'s committed value, re-judged whenever it is committed (combineLatest).
    func dependents(of field: FieldName) -> [FieldName]
    /// The `.register` or `.login` action for the committed values.
    func submitAction(_ table: FieldTable) -> FormAction
    func outcome(_ identifier: String) -> SubmitOutcome
    func failureCode(_ error: RosterError) -> SubmitCode
    /// The field a store failure proves taken, if any; it turns `taken` as if registered live.
    func takenField(_ error: RosterError) -> FieldName?
}
