/// What a field's local rules conclude: a verdict, or "the database (or quality checker) must decide".
public enum RuleOutcome: Equatable, Sendable {
    case settled(FieldVerdict)
    case needsCheck
}
