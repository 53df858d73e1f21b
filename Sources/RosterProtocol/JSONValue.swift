/// A JSON document as parsed off the wire; numbers keep their literal text so ids echo back exactly.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal, already validated as JSON number syntax.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in wire order; a duplicate key keeps its last value on lookup, as most parsers do.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b || (Double(a) != nil && Double(a) == Double(b))
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.null, _), (.bool, _), (.number, _), (.string, _), (.array, _), (.object, _): false
        }
    }

    public static func int(_ value: Int64) -> JSONValue { .number(String(value)) }
    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    /// The member `key` of an object, or nil for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.0 == key })?.1
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The value as a whole number, accepting `5`, `5.0` and `5e0` but not `5.5` or out-of-range values.
    public var int64Value: Int64? {
        guard case .number(let literal) = self else { return nil }
        if let exact = Int64(literal) { return exact }
        guard let double = Double(literal), double >= -9.007_199_254_740_992e15, double <= 9.007_199_254_740_992e15
        else { return nil }
        let whole = Int64(double)
        return Double(whole) == double ? whole : nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var objectMembers: [(String, JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The JSON type's name, used in error details.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(String(value)) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// A string, or null when absent.
    public static func optional(_ value: String?) -> JSONValue {
        value.map(JSONValue.string) ?? .null
    }
}
