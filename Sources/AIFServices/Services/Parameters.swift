public import Foundation

extension JSONValue {
    /// The value as text for a query string or form: numbers and flags in their plain form;
    /// `nil` for null, arrays and dictionaries (which encode structurally).
    public var textValue: String? {
        switch self {
        case .string(let text): text
        case .integer(let number): String(number)
        case .number(let number): String(number)
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

/// Request parameters by name: a dictionary of ``JSONValue``s, written as a literal whose
/// values may be literals or variables alike.
///
/// ```swift
/// let customer = "cus_T001"
/// let order: Parameters = ["customer": customer, "amount": 1200, "metadata": ["order": 7], "tags": ["new", 2]]
/// ```
///
/// A value at the top is any ``Parameters/Convertible`` — text, a number, a flag, a UUID, an
/// optional (`nil` is null) — or a nested literal; inside a nested literal, values are
/// ``JSONValue`` literals.
public struct Parameters: Sendable, Hashable, Collection, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// A parameter: its name and value.
    public typealias Element = (key: String, value: JSONValue)
    /// A position in the parameters.
    public typealias Index = Dictionary<String, JSONValue>.Index

    /// The parameters as a dictionary.
    public var dictionary: [String: JSONValue]

    /// No parameters.
    public init() {
        dictionary = [:]
    }

    /// The parameters of a dictionary.
    public init(_ dictionary: [String: JSONValue]) {
        self.dictionary = dictionary
    }

    /// Parameters from name–value pairs; a name given twice keeps `combine`'s value.
    public init<Pairs: Sequence>(_ pairs: Pairs, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows
    where Pairs.Element == (String, JSONValue) {
        dictionary = try Dictionary(pairs, uniquingKeysWith: combine)
    }

    /// A literal: each value a ``Parameters/Convertible`` (a variable as well as a literal) or
    /// `nil`, meaning null; a name written twice keeps its last value.
    public init(dictionaryLiteral elements: (String, (any Parameters.Convertible)?)...) {
        dictionary = Dictionary(elements.map { ($0.0, $0.1?.parameterValue ?? .null) }, uniquingKeysWith: { _, last in last })
    }

    /// The value of a parameter; setting `nil` removes it.
    public subscript(name: String) -> JSONValue? {
        get { dictionary[name] }
        set { dictionary[name] = newValue }
    }

    /// The names.
    public var keys: Dictionary<String, JSONValue>.Keys { dictionary.keys }
    /// The values.
    public var values: Dictionary<String, JSONValue>.Values { dictionary.values }

    /// The first position.
    public var startIndex: Index { dictionary.startIndex }
    /// The position past the last.
    public var endIndex: Index { dictionary.endIndex }
    /// The position after `index`.
    public func index(after index: Index) -> Index { dictionary.index(after: index) }
    /// The parameter at `position`.
    public subscript(position: Index) -> Element { dictionary[position] }

    /// These parameters and `other`'s; a name in both keeps `combine`'s value.
    public func merging(_ other: Parameters, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows -> Parameters {
        Parameters(try dictionary.merging(other.dictionary, uniquingKeysWith: combine))
    }

    /// Adds `other`'s parameters; a name in both keeps `combine`'s value.
    public mutating func merge(_ other: Parameters, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows {
        try dictionary.merge(other.dictionary, uniquingKeysWith: combine)
    }

    /// Removes a parameter and returns its value, if it was there.
    @discardableResult
    public mutating func removeValue(forKey name: String) -> JSONValue? {
        dictionary.removeValue(forKey: name)
    }

    /// The parameters for which `isIncluded` holds.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> Parameters {
        Parameters(try dictionary.filter(isIncluded))
    }

    /// The parameters with each value transformed.
    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> Parameters {
        Parameters(try dictionary.mapValues(transform))
    }

    /// The parameters as a dictionary literal.
    public var description: String { dictionary.description }
}

extension Parameters {
    /// A value that can stand as a parameter: text, numbers, flags, UUIDs, optionals of them,
    /// ``JSONValue`` itself, and the nested literals of ``JSONValue``.
    public protocol Convertible {
        /// The value as a parameter.
        var parameterValue: JSONValue { get }
    }
}

extension JSONValue: Parameters.Convertible {
    /// The value itself.
    public var parameterValue: JSONValue { self }
}

// The cases of JSONValue, spelled where a parameters literal expects any
// Parameters.Convertible (`["id": .integer(id)]`), which is not JSONValue itself. Disfavoured, so
// that where JSONValue is expected its own cases are meant, not these.
extension Parameters.Convertible where Self == JSONValue {
    /// Text (``JSONValue/string(_:)``).
    @_disfavoredOverload public static func string(_ text: String) -> JSONValue { JSONValue.string(text) }
    /// A whole number (``JSONValue/integer(_:)``).
    @_disfavoredOverload public static func integer(_ number: Int) -> JSONValue { JSONValue.integer(number) }
    /// A floating-point number (``JSONValue/number(_:)``).
    @_disfavoredOverload public static func number(_ number: Double) -> JSONValue { JSONValue.number(number) }
    /// A flag (``JSONValue/bool(_:)``).
    @_disfavoredOverload public static func bool(_ flag: Bool) -> JSONValue { JSONValue.bool(flag) }
    /// Null (``JSONValue/null``).
    @_disfavoredOverload public static var null: JSONValue { JSONValue.null }
    /// An ordered list (``JSONValue/array(_:)``).
    @_disfavoredOverload public static func array(_ values: [JSONValue]) -> JSONValue { JSONValue.array(values) }
    /// A nested dictionary (``JSONValue/object(_:)``).
    @_disfavoredOverload public static func object(_ values: [String: JSONValue]) -> JSONValue { JSONValue.object(values) }
}

extension String: Parameters.Convertible {
    /// Text.
    public var parameterValue: JSONValue { .string(self) }
}

extension Substring: Parameters.Convertible {
    /// Text.
    public var parameterValue: JSONValue { .string(String(self)) }
}

extension Int: Parameters.Convertible {
    /// A whole number.
    public var parameterValue: JSONValue { .integer(self) }
}

extension Int64: Parameters.Convertible {
    /// A whole number.
    public var parameterValue: JSONValue { .integer(Int(self)) }
}

extension Int32: Parameters.Convertible {
    /// A whole number.
    public var parameterValue: JSONValue { .integer(Int(self)) }
}

extension UInt32: Parameters.Convertible {
    /// A whole number.
    public var parameterValue: JSONValue { .integer(Int(self)) }
}

extension Double: Parameters.Convertible {
    /// A floating-point number.
    public var parameterValue: JSONValue { .number(self) }
}

extension Float: Parameters.Convertible {
    /// A floating-point number.
    public var parameterValue: JSONValue { .number(Double(self)) }
}

extension Bool: Parameters.Convertible {
    /// A flag.
    public var parameterValue: JSONValue { .bool(self) }
}

extension UUID: Parameters.Convertible {
    /// Its text, in lower case (`7c0c…`).
    public var parameterValue: JSONValue { .string(uuidString.lowercased()) }
}

extension Optional: Parameters.Convertible where Wrapped: Parameters.Convertible {
    /// The value, or null.
    public var parameterValue: JSONValue { self?.parameterValue ?? .null }
}

extension Array: Parameters.Convertible where Element == JSONValue {
    /// An array literal's elements, as an ordered list.
    public var parameterValue: JSONValue { .array(self) }
}

extension Dictionary: Parameters.Convertible where Key == String, Value == JSONValue {
    /// A dictionary literal's members, as a nested dictionary.
    public var parameterValue: JSONValue { .object(self) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int) { self = .integer(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A Boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array literal.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `nil`, meaning null.
    public init(nilLiteral: ()) { self = .null }
}
