/// A field's state as a client shows it (protocol.md "Events").
public enum FieldState: String, CaseIterable, Sendable {
    case empty
    case validating
    case valid
    case invalid
}

/// What a field shows: its state and the code that explains it.
public struct FieldVerdict: Equatable, Hashable, Sendable {
    public var state: FieldState
    public var code: FieldCode

    public init(_ state: FieldState, _ code: FieldCode) {
        self.state = state
        self.code = code
    }

    public static let empty = FieldVerdict(.empty, .empty)
    public static let validating = FieldVerdict(.validating, .validating)
    public static func valid(_ code: FieldCode) -> FieldVerdict { FieldVerdict(.valid, code) }
    public static func invalid(_ code: FieldCode) -> FieldVerdict { FieldVerdict(.invalid, code) }

    /// Whether this verdict ends a check (the "final" states of protocol.md "Events").
    public var isFinal: Bool {
        switch state {
        case .empty, .valid, .invalid: true
        case .validating: false
        }
    }
}
