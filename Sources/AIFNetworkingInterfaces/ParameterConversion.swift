#if Interfaces
import Foundation

/// Turns an interface method's arguments into parameter values: text, numbers and flags as
/// they are, dates as ISO 8601 text, UUIDs and URLs as text, optionals as their value (`nil`
/// when absent), lists and dictionaries element by element, and any other `Encodable` value as
/// its JSON (an enumeration with raw values as its raw value).
enum ParameterConversion {
    /// Why a value could not be turned into a parameter.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `value` as a parameter value; `nil` for an absent optional.
    static func value(of value: any Encodable) throws -> JSONValue? {
        switch value {
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Int: return .integer(value)
        case let value as any BinaryInteger:
            guard let number = Int(exactly: value) else { throw Failure(description: "\(value) does not fit in an Int") }
            return .integer(number)
        case let value as Double: return try finite(value)
        case let value as Float: return try finite(Double(value))
        case let value as Date: return .string(value.formatted(.iso8601))
        case let value as UUID: return .string(value.uuidString)
        case let value as URL: return .string(value.absoluteString)
        case let value as any OptionalArgument: return try value.wrapped.flatMap { try Self.value(of: $0) } ?? nil
        case let value as any ListArgument: return .array(try value.elements.map { try Self.value(of: $0) ?? .null })
        default: return try encoded(value)
        }
    }

    /// A number that text and JSON can carry: not infinite, not NaN.
    private static func finite(_ number: Double) throws -> JSONValue {
        guard number.isFinite else { throw Failure(description: "\(number) is not a finite number") }
        return .number(number)
    }

    /// Any other value, through its JSON.
    private static func encoded(_ value: any Encodable) throws -> JSONValue {
        let data: Data
        do {
            data = try JSONEncoder().encode(value)
        } catch {
            throw Failure(description: "it does not encode as JSON: \(error)")
        }
        do {
            return try FastJSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw Failure(description: "its JSON does not read back: \(error)")
        }
    }
}

/// An optional, seen through `any`.
private protocol OptionalArgument {
    var wrapped: (any Encodable)? { get }
}

extension Optional: OptionalArgument where Wrapped: Encodable {
    fileprivate var wrapped: (any Encodable)? { self }
}

/// A list, seen through `any`.
private protocol ListArgument {
    var elements: [any Encodable] { get }
}

extension Array: ListArgument where Element: Encodable {
    fileprivate var elements: [any Encodable] { map { $0 } }
}
#endif
