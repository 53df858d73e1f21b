/// What a rulebook says about a field's committed value: a verdict now, or a check to run.
public enum FieldEvaluation: Equatable, Sendable {
    case settled(FieldVerdict)
    case check(Check)
}

/// The form-specific half of a form (`FormKernel<Rules>`): which fields, which rules, what submitting means.
/// `FormKernel` owns the timing (debounce, flatMapLatest, emission) and asks the rulebook everything else.
/// A rulebook speaks only its own `Field` enum; the kernel does the crossing to and from wire names.
public protocol FormRulebook: Sendable {
    associatedtype Field: FormField
    typealias Table = FieldTable<Field>

    static var form: FormName { get }
    /// The failure codes the form has messages for; any other failure reads as `failed`.
    static var failureCodes: [SubmitCode] { get }

    var policy: Policy { get set }

    func evaluate(_ field: Field, in table: Table) -> FieldEvaluation
    /// Enablement is a function of the other fields' latest final verdicts.
    func isEnabled(_ field: Field, in table: Table) -> Bool
    /// A pure function of settled states; a field whose latest input is unchecked counts as not settled.
    func isSubmittable(_ table: Table) -> Bool
    /// Fields judged against `field`'s committed value, re-judged whenever it is committed (combineLatest).
    func dependents(of field: Field) -> [Field]
    /// The `.register`, `.login` or `.changePassword` action for the committed values.
    func submitAction(_ table: Table) -> FormAction
    func outcome(_ identifier: String) -> SubmitOutcome
    /// The key the store would report `value` taken under, so a `taken` (from a failed submit or another
    /// session's registration) can be matched to what the field holds; nil for a field never reported taken.
    func takenKey(of field: Field, _ value: String) -> String?
    /// The key (see `takenKey`) an account just registered with this canonical username and email holds for
    /// `field`, which turns the field `taken` if it holds it too; nil when a new account says nothing of it.
    func registeredKey(of field: Field, username: String, email: String?) -> String?
    /// A submit of the `submitted` committed values failed with `error`; a rule that follows the store's answer
    /// (the login form's `code` after `code_required`) learns it here, before the kernel tells what changed.
    mutating func submitFailed(_ error: RosterError, submitted: [Field: Secret])
}

extension FormRulebook {
    /// Most rules do not follow the store's answer.
    public mutating func submitFailed(_ error: RosterError, submitted: [Field: Secret]) {}
}
