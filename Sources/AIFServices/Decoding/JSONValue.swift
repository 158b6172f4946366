import Foundation

/// A JSON value of any shape: a request parameter's value, and content without a type of its own
/// (an API defined in a config file and called without one, say). Numbers and flags stay apart
/// (Foundation's `JSONSerialization` does not on Linux, where `1` also reads as `true`).
///
/// Written as literals — `["page": 2, "keyword": "coffee", "tags": ["a", "b"], "filter": ["min": 10]]`
/// is a ``Parameters`` of them:
///
/// ```swift
/// let goods = try await api("goods.detail").load(["id": 7]).content
/// print(goods["title"]?.stringValue ?? "untitled")
/// ```
public enum JSONValue: Codable, Sendable, Hashable {
    /// A string.
    case string(String)
    /// A number with a fraction or an exponent.
    case number(Double)
    /// A whole number.
    case integer(Int)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Reads any JSON value.
    public init(from decoder: any Decoder) throws {
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

    /// Writes the value as it was read.
    public func encode(to encoder: any Encoder) throws {
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

    /// An object's member, or `nil` when this is not an object or has no such member.
    public subscript(member: String) -> JSONValue? {
        if case .object(let object) = self { return object[member] }
        return nil
    }

    /// An array's element, or `nil` when this is not an array or the index is out of range.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// The string, or `nil` for another kind of value.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number (a whole one too), or `nil` for another kind of value.
    public var doubleValue: Double? {
        switch self {
        case .number(let number): number
        case .integer(let integer): Double(integer)
        default: nil
        }
    }

    /// The whole number, or `nil` for another kind of value.
    public var intValue: Int? {
        if case .integer(let integer) = self { return integer }
        return nil
    }

    /// The flag, or `nil` for another kind of value.
    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// The elements of an array, or `nil` for another kind of value.
    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }
}

extension JSONValue {
    /// The value at token `index` of a parsed document, read straight off the tape: reading it
    /// through `Decodable` tries each kind in turn, making an error for each miss (a thousand API
    /// defines read five times faster this way). Numbers read as the decoder reads them: a whole
    /// number that fits (`2`, `2.0`, `2e3`) is ``integer(_:)``, any other ``number(_:)``.
    package init(tape: JSONTape, at index: Int) {
        let token = tape.tokens[index]
        switch token.kind {
        case .null: self = .null
        case .true: self = .bool(true)
        case .false: self = .bool(false)
        case .string: self = .string(tape.text(at: index) ?? "")
        case .number:
            let raw = tape.bytes[Int(token.start)..<Int(token.end)]
            if let whole = TapeDecoder.wholeNumber(Int.self, raw) {
                self = .integer(whole)
            } else {
                self = .number(Double(String(decoding: raw, as: UTF8.self)) ?? .nan)
            }
        case .array:
            var elements: [JSONValue] = []
            elements.reserveCapacity(Int(token.count))
            var element = index + 1
            for _ in 0..<Int(token.count) {
                elements.append(JSONValue(tape: tape, at: element))
                element = Int(tape.tokens[element].next)
            }
            self = .array(elements)
        case .object:
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(Int(token.count))
            var key = index + 1
            for _ in 0..<Int(token.count) {
                members[tape.text(at: key) ?? ""] = JSONValue(tape: tape, at: key + 1)
                key = Int(tape.tokens[key + 1].next)
            }
            self = .object(members)
        }
    }
}
