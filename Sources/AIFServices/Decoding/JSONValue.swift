import Foundation

/// A parsed JSON value that keeps numbers and flags apart (Foundation's `JSONSerialization`
/// does not on Linux, where `1` also reads as `true`).
enum JSONValue: Codable, Equatable {
    case string(String)
    case number(Double)
    case integer(Int)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .number(let number): try container.encode(number)
        case .integer(let integer): try container.encode(integer)
        case .bool(let flag): try container.encode(flag)
        case .null: try container.encodeNil()
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }

    /// A scalar as a request carries it (`2`, `true`, `Scale`); `nil` for the rest.
    var parameterText: String? {
        switch self {
        case .string(let text): text
        case .integer(let integer): String(integer)
        case .number(let number): String(number)
        case .bool(let flag): String(flag)
        case .null, .array, .object: nil
        }
    }
}
