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
}

/// Request parameters by name: a dictionary of ``ParameterValue``s, written as a literal whose
/// values may be literals or variables alike.
///
/// ```swift
/// let customer = "cus_T001"
/// let order: Parameters = ["customer": customer, "amount": 1200, "metadata": ["order": 7], "tags": ["new", 2]]
/// ```
///
/// A value at the top is any ``Parameters/Convertible`` — text, a number, a flag, a UUID, an
/// optional (`nil` is null) — or a nested literal; inside a nested literal, values are
/// ``ParameterValue`` literals.
public struct Parameters: Sendable, Hashable, Collection, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// A parameter: its name and value.
    public typealias Element = (key: String, value: ParameterValue)
    /// A position in the parameters.
    public typealias Index = Dictionary<String, ParameterValue>.Index

    /// The parameters as a dictionary.
    public var dictionary: [String: ParameterValue]

    /// No parameters.
    public init() {
        dictionary = [:]
    }

    /// The parameters of a dictionary.
    public init(_ dictionary: [String: ParameterValue]) {
        self.dictionary = dictionary
    }

    /// Parameters from name–value pairs; a name given twice keeps `combine`'s value.
    public init<Pairs: Sequence>(_ pairs: Pairs, uniquingKeysWith combine: (ParameterValue, ParameterValue) throws -> ParameterValue) rethrows
    where Pairs.Element == (String, ParameterValue) {
        dictionary = try Dictionary(pairs, uniquingKeysWith: combine)
    }

    /// A literal: each value a ``Parameters/Convertible`` (a variable as well as a literal) or
    /// `nil`, meaning null; a name written twice keeps its last value.
    public init(dictionaryLiteral elements: (String, (any Parameters.Convertible)?)...) {
        dictionary = Dictionary(elements.map { ($0.0, $0.1?.parameterValue ?? .null) }, uniquingKeysWith: { _, last in last })
    }

    /// The value of a parameter; setting `nil` removes it.
    public subscript(name: String) -> ParameterValue? {
        get { dictionary[name] }
        set { dictionary[name] = newValue }
    }

    /// The names.
    public var keys: Dictionary<String, ParameterValue>.Keys { dictionary.keys }
    /// The values.
    public var values: Dictionary<String, ParameterValue>.Values { dictionary.values }

    /// The first position.
    public var startIndex: Index { dictionary.startIndex }
    /// The position past the last.
    public var endIndex: Index { dictionary.endIndex }
    /// The position after `index`.
    public func index(after index: Index) -> Index { dictionary.index(after: index) }
    /// The parameter at `position`.
    public subscript(position: Index) -> Element { dictionary[position] }

    /// These parameters and `other`'s; a name in both keeps `combine`'s value.
    public func merging(_ other: Parameters, uniquingKeysWith combine: (ParameterValue, ParameterValue) throws -> ParameterValue) rethrows -> Parameters {
        Parameters(try dictionary.merging(other.dictionary, uniquingKeysWith: combine))
    }

    /// Adds `other`'s parameters; a name in both keeps `combine`'s value.
    public mutating func merge(_ other: Parameters, uniquingKeysWith combine: (ParameterValue, ParameterValue) throws -> ParameterValue) rethrows {
        try dictionary.merge(other.dictionary, uniquingKeysWith: combine)
    }

    /// Removes a parameter and returns its value, if it was there.
    @discardableResult
    public mutating func removeValue(forKey name: String) -> ParameterValue? {
        dictionary.removeValue(forKey: name)
    }

    /// The parameters for which `isIncluded` holds.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> Parameters {
        Parameters(try dictionary.filter(isIncluded))
    }

    /// The parameters with each value transformed.
    public func mapValues(_ transform: (ParameterValue) throws -> ParameterValue) rethrows -> Parameters {
        Parameters(try dictionary.mapValues(transform))
    }

    /// The parameters as a dictionary literal.
    public var description: String { dictionary.description }
}

extension Parameters {
    /// A value that can stand as a parameter: text, numbers, flags, UUIDs, optionals of them,
    /// ``ParameterValue`` itself, and the nested literals of ``ParameterValue``.
    public protocol Convertible {
        /// The value as a parameter.
        var parameterValue: ParameterValue { get }
    }
}

extension ParameterValue: Parameters.Convertible {
    /// The value itself.
    public var parameterValue: ParameterValue { self }
}

// The cases of ParameterValue, spelled where a parameters literal expects any
// Parameters.Convertible (`["id": .int(id)]`), which is not ParameterValue itself. Disfavoured, so
// that where ParameterValue is expected its own cases are meant, not these.
extension Parameters.Convertible where Self == ParameterValue {
    /// Text (``ParameterValue/string(_:)``).
    @_disfavoredOverload public static func string(_ text: String) -> ParameterValue { ParameterValue.string(text) }
    /// A whole number (``ParameterValue/int(_:)``).
    @_disfavoredOverload public static func int(_ number: Int) -> ParameterValue { ParameterValue.int(number) }
    /// A floating-point number (``ParameterValue/double(_:)``).
    @_disfavoredOverload public static func double(_ number: Double) -> ParameterValue { ParameterValue.double(number) }
    /// A flag (``ParameterValue/bool(_:)``).
    @_disfavoredOverload public static func bool(_ flag: Bool) -> ParameterValue { ParameterValue.bool(flag) }
    /// Null (``ParameterValue/null``).
    @_disfavoredOverload public static var null: ParameterValue { ParameterValue.null }
    /// An ordered list (``ParameterValue/array(_:)``).
    @_disfavoredOverload public static func array(_ values: [ParameterValue]) -> ParameterValue { ParameterValue.array(values) }
    /// A nested dictionary (``ParameterValue/object(_:)``).
    @_disfavoredOverload public static func object(_ values: [String: ParameterValue]) -> ParameterValue { ParameterValue.object(values) }
}

extension String: Parameters.Convertible {
    /// Text.
    public var parameterValue: ParameterValue { .string(self) }
}

extension Substring: Parameters.Convertible {
    /// Text.
    public var parameterValue: ParameterValue { .string(String(self)) }
}

extension Int: Parameters.Convertible {
    /// A whole number.
    public var parameterValue: ParameterValue { .int(self) }
}

extension Int64: Parameters.Convertible {
    /// A whole number.
    public var parameterValue: ParameterValue { .int(Int(self)) }
}

extension Int32: Parameters.Convertible {
    /// A whole number.
    public var parameterValue: ParameterValue { .int(Int(self)) }
}

extension UInt32: Parameters.Convertible {
    /// A whole number.
    public var parameterValue: ParameterValue { .int(Int(self)) }
}

extension Double: Parameters.Convertible {
    /// A floating-point number.
    public var parameterValue: ParameterValue { .double(self) }
}

extension Float: Parameters.Convertible {
    /// A floating-point number.
    public var parameterValue: ParameterValue { .double(Double(self)) }
}

extension Bool: Parameters.Convertible {
    /// A flag.
    public var parameterValue: ParameterValue { .bool(self) }
}

extension UUID: Parameters.Convertible {
    /// Its text, in lower case (`7c0c…`).
    public var parameterValue: ParameterValue { .string(uuidString.lowercased()) }
}

extension Optional: Parameters.Convertible where Wrapped: Parameters.Convertible {
    /// The value, or null.
    public var parameterValue: ParameterValue { self?.parameterValue ?? .null }
}

extension Array: Parameters.Convertible where Element == ParameterValue {
    /// An array literal's elements, as an ordered list.
    public var parameterValue: ParameterValue { .array(self) }
}

extension Dictionary: Parameters.Convertible where Key == String, Value == ParameterValue {
    /// A dictionary literal's members, as a nested dictionary.
    public var parameterValue: ParameterValue { .object(self) }
}

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
