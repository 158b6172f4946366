@testable import AIFServices
import Foundation
import Testing

@Suite("Parameters: literals of literals and variables")
struct ParametersTests {
    @Test func variablesStandInALiteralAsLiteralsDo() {
        let customer = "cus_T001"
        let amount = 1200
        let ratio = 0.5
        let live = false
        let note: String? = nil
        let coupon: String? = "WELCOME10"
        let key = UUID(uuidString: "7C0C2A52-1D4E-4F4A-9E0B-3B7C2E9D8F10")!
        let existing: JSONValue = ["a": 1]
        let parameters: Parameters = [
            "customer": customer, "amount": amount, "ratio": ratio, "live": live, "note": note, "coupon": coupon, "key": key,
            "existing": existing, "tags": ["new", 2, nil], "metadata": ["order": 7, "gift": true], "count": .integer(amount), "none": nil,
            "label": Substring("label"),
        ]
        #expect(parameters["customer"] == .string("cus_T001"))
        #expect(parameters["amount"] == .integer(1200))
        #expect(parameters["ratio"] == .number(0.5))
        #expect(parameters["live"] == .bool(false))
        #expect(parameters["note"] == .null)
        #expect(parameters["coupon"] == .string("WELCOME10"))
        #expect(parameters["key"] == .string("7c0c2a52-1d4e-4f4a-9e0b-3b7c2e9d8f10"))
        #expect(parameters["existing"] == .object(["a": .integer(1)]))
        #expect(parameters["tags"] == .array([.string("new"), .integer(2), .null]))
        #expect(parameters["metadata"] == .object(["order": .integer(7), "gift": .bool(true)]))
        #expect(parameters["count"] == .integer(1200))
        #expect(parameters["none"] == .null)
        #expect(parameters["label"] == .string("label"))
        #expect(parameters.count == 13)
    }

    @Test func theyWorkAsADictionaryDoes() {
        var parameters: Parameters = ["a": 1, "b": "two"]
        parameters["c"] = .bool(true)
        parameters["a"] = nil
        #expect(parameters == ["b": "two", "c": true])
        #expect(parameters.removeValue(forKey: "b") == .string("two"))
        #expect(parameters.merging(["c": false, "d": 4]) { _, new in new } == ["c": false, "d": 4])
        #expect(parameters.filter { $0.key == "c" }.keys.sorted() == ["c"])
        #expect(parameters.mapValues { _ in .null } == ["c": nil])
        #expect(Set([parameters, ["c": true]]).count == 1)
        #expect(Parameters([("x", JSONValue.integer(1)), ("x", .integer(2))], uniquingKeysWith: { first, _ in first }) == ["x": 1])
        #expect(Parameters().isEmpty)
        #expect(parameters.map(\.key) == ["c"])
    }
}

/// The JSON body the request generator writes for parameters, held byte for byte to what
/// Foundation's `JSONSerialization` writes with the options the generator used to give it.
@Suite("Parameters: the JSON body, as JSONSerialization writes it")
struct ParametersJSONTests {
    /// What `JSONSerialization` writes for `value` (sorted keys, slashes unescaped).
    private static func reference(_ value: JSONValue) -> String? {
        func object(_ value: JSONValue) -> Any {
            switch value {
            case .string(let text): text
            case .integer(let number): number
            case .number(let number): number
            case .bool(let flag): flag
            case .null: NSNull()
            case .array(let values): values.map(object)
            case .object(let values): values.mapValues(object)
            }
        }
        let written = object(value)
        guard JSONSerialization.isValidJSONObject(written),
            let data = try? JSONSerialization.data(withJSONObject: written, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func written(_ value: JSONValue) -> String? {
        value.jsonBody().map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func valuesAreWrittenAsJSONSerializationWritesThem() {
        let doubles: [Double] = [0, -0.0, 0.1, 1, 2.5, -3.75, 1e20, 1e21, 1.5e-7, 123456789.125, 1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, Double(Int64.max), 0.1 + 0.2, .pi, 100]
        var values: [JSONValue] = doubles.map { .number($0) }
        values += [.integer(0), .integer(-42), .integer(.max), .integer(.min), .bool(true), .bool(false), .null, .array([]), .object([:])]
        values += [
            .string(""), .string("plain"), .string("a/b\"c\\d"), .string("\n\r\t\u{08}\u{0C}\u{01}\u{1F}\u{7F}"), .string("é 漢字 😀"),
            .string("</script>"), .string("\u{2028}\u{2029}"),
        ]
        values.append(.object([
            "B": 1, "a": 2, "item10": 3, "item2": 4, "A": 5, "_x": 6, "b": 7, "Z9": 8, "z10": 9, "ä": 10, "ab": 11, "a b": 12, "a-b": 13, "": 14,
        ]))
        values.append(.object(["items": [["price": "price_1", "quantity": 2], ["price_data": ["currency": "usd", "unit_amount": 1.5]]], "metadata": ["order": 7, "note": .null]]))
        for value in values {
            let array = JSONValue.array([value])
            #expect(Self.written(array) == Self.reference(array), "\(value)")
        }
    }

    /// Objects of random names and values, nested: the names are where an ordering would differ.
    @Test func randomObjectsAreWrittenAsJSONSerializationWritesThem() {
        var generator = SeededGenerator(seed: 2026_11_28)
        let alphabet = Array("aAbBzZ019_-. éÉ")
        func name() -> String { String((0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }) }
        func value(depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth < 3 ? 7 : 5), using: &generator) {
            case 0: .integer(Int.random(in: -1_000_000...1_000_000, using: &generator))
            case 1: .number(Double.random(in: -1e6...1e6, using: &generator))
            case 2: .string(name())
            case 3: .bool(Bool.random(using: &generator))
            case 4: .null
            case 5: .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in value(depth: depth + 1) })
            default: .object(Dictionary((0..<Int.random(in: 0...6, using: &generator)).map { _ in (name(), value(depth: depth + 1)) }, uniquingKeysWith: { first, _ in first }))
            }
        }
        for _ in 0..<500 {
            let object = JSONValue.object(Dictionary((0..<Int.random(in: 1...8, using: &generator)).map { _ in (name(), value(depth: 0)) }, uniquingKeysWith: { first, _ in first }))
            #expect(Self.written(object) == Self.reference(object), "\(object)")
        }
    }

    @Test func aNumberJSONCannotHoldIsRefused() {
        #expect(JSONValue.object(["ratio": .number(.nan)]).jsonBody() == nil)
        #expect(JSONValue.array([.number(.infinity)]).jsonBody() == nil)
    }
}
