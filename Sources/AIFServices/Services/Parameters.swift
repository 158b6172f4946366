import Foundation

/// One parameter value: text, a number, a flag, null, or nested arrays and dictionaries.
///
/// Written as literals: `["page": 2, "keyword": "coffee", "tags": ["a", "b"], "filter": ["min": 10]]`.
public enum ParameterValue: Sendable, Hashable {
    /// Text.
    case string(String)
    /// A whole number.
    case int(Int)
    /// A floating-point number.
    case double(Double)
    /// A flag.
    case bool(Bool)
    /// An explicit null (JSON `null`; left out of query strings and forms).
    case null
    /// An ordered list.
    case array([ParameterValue])
    /// A nested dictionary.
    case object([String: ParameterValue])

    /// The value as text for a query string or form: numbers and flags in their plain form;
    /// `nil` for null, arrays and dictionaries (which encode structurally).
    public var textValue: String? {
        switch self {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .null, .array, .object: nil
        }
    }

    /// Whether the value is an array or a dictionary.
    var isStructured: Bool {
        switch self {
        case .array, .object: true
        default: false
        }
    }

    /// The value as a JSON-compatible Foundation object.
    var jsonObject: Any {
        switch self {
        case .string(let text): text
        case .int(let number): number
        case .double(let number): number
        case .bool(let flag): flag
        case .null: NSNull()
        case .array(let values): values.map(\.jsonObject)
        case .object(let values): values.mapValues(\.jsonObject)
        }
    }
}

/// Request parameters by name.
public typealias Parameters = [String: ParameterValue]

extension ParameterValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A Boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array literal.
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
    /// A dictionary literal; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `nil`, meaning null.
    public init(nilLiteral: ()) { self = .null }
}
