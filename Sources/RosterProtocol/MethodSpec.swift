import RosterCore

/// The shape of a param or result value; params are checked against it, and `rpc.describe` prints it.
public indirect enum Shape: Sendable {
    case string
    case integer(ClosedRange<Int64>)
    case boolean
    case oneOf([String])
    case object([FieldSpec])
    case array(Shape)
    /// Anything JSON, described in words (for results only).
    case described(String)

    /// The shape as `rpc.describe` shows it.
    public var json: JSONValue {
        switch self {
        case .string: "string"
        case .integer(let range):
            .object([("type", "integer"), ("min", .int(range.lowerBound)), ("max", .int(range.upperBound))])
        case .boolean: "boolean"
        case .oneOf(let values): .object([("one_of", .array(values.map(JSONValue.string)))])
        case .object(let fields): .object(fields.map { ($0.describedName, $0.shape.json) })
        case .array(let element): .array([element.json])
        case .described(let words): .string(words)
        }
    }
}

/// One named member of an object shape; optional ones are shown with a trailing `?`.
public struct FieldSpec: Sendable {
    public let name: String
    public let shape: Shape
    public let required: Bool

    public init(_ name: String, _ shape: Shape, required: Bool = true) {
        self.name = name
        self.shape = shape
        self.required = required
    }

    public static func optional(_ name: String, _ shape: Shape) -> FieldSpec {
        FieldSpec(name, shape, required: false)
    }

    var describedName: String { required ? name : name + "?" }
}

/// A method's name, purpose, params and result, declared once and used both to check and to describe.
public struct MethodSpec: Sendable {
    public let name: String
    public let summary: String
    public let params: [FieldSpec]
    public let result: Shape

    public init(_ name: String, summary: String, params: [FieldSpec] = [], result: Shape) {
        self.name = name
        self.summary = summary
        self.params = params
        self.result = result
    }

    public var json: JSONValue {
        .object([
            ("name", .string(name)),
            ("summary", .string(summary)),
            ("params", Shape.object(params).json),
            ("result", result.json),
        ])
    }
}

/// Params that passed their method's spec: every required one present, none unknown, every one well typed.
public struct Params: Sendable {
    private let members: [String: JSONValue]

    public init(validating params: [(String, JSONValue)], against fields: [FieldSpec]) throws(RosterError) {
        members = try Params.check(params, against: fields, path: "")
    }

    public subscript(name: String) -> JSONValue? { members[name] }

    public func string(_ name: String) -> String? { members[name]?.stringValue }
    public func int(_ name: String) -> Int64? { members[name]?.int64Value }
    public func bool(_ name: String) -> Bool? { members[name]?.boolValue }

    private static func check(_ params: [(String, JSONValue)], against fields: [FieldSpec],
                              path: String) throws(RosterError) -> [String: JSONValue] {
        var byName: [String: JSONValue] = [:]
        for (name, value) in params {
            guard fields.contains(where: { $0.name == name }) else {
                throw .invalidParams(param: path + name, problem: .unknown)
            }
            byName[name] = value
        }
        for field in fields {
            let qualified = path + field.name
            guard let value = byName[field.name], value != .null else {
                if field.required { throw .invalidParams(param: qualified, problem: .missing) }
                byName[field.name] = nil
                continue
            }
            try checkValue(value, shape: field.shape, name: qualified)
        }
        return byName
    }

    private static func checkValue(_ value: JSONValue, shape: Shape, name: String) throws(RosterError) {
        switch shape {
        case .string:
            guard value.stringValue != nil else { throw .invalidParams(param: name, problem: .wrongType) }
        case .boolean:
            guard value.boolValue != nil else { throw .invalidParams(param: name, problem: .wrongType) }
        case .integer(let range):
            guard case .number = value else { throw .invalidParams(param: name, problem: .wrongType) }
            guard let number = value.int64Value else { throw .invalidParams(param: name, problem: .wrongType) }
            guard range.contains(number) else { throw .invalidParams(param: name, problem: .outOfRange) }
        case .oneOf(let allowed):
            guard let text = value.stringValue else { throw .invalidParams(param: name, problem: .wrongType) }
            guard allowed.contains(text) else { throw .invalidParams(param: name, problem: .outOfRange) }
        case .object(let fields):
            guard let members = value.objectMembers else { throw .invalidParams(param: name, problem: .wrongType) }
            _ = try check(members, against: fields, path: name + ".")
        case .array(let element):
            guard let items = value.arrayValue else { throw .invalidParams(param: name, problem: .wrongType) }
            for item in items { try checkValue(item, shape: element, name: name) }
        case .described:
            break
        }
    }
}
