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
        let existing: ParameterValue = ["a": 1]
        let parameters: Parameters = [
            "customer": customer, "amount": amount, "ratio": ratio, "live": live, "note": note, "coupon": coupon, "key": key,
            "existing": existing, "tags": ["new", 2, nil], "metadata": ["order": 7, "gift": true], "count": .int(amount), "none": nil,
            "label": Substring("label"),
        ]
        #expect(parameters["customer"] == .string("cus_T001"))
        #expect(parameters["amount"] == .int(1200))
        #expect(parameters["ratio"] == .double(0.5))
        #expect(parameters["live"] == .bool(false))
        #expect(parameters["note"] == .null)
        #expect(parameters["coupon"] == .string("WELCOME10"))
        #expect(parameters["key"] == .string("7c0c2a52-1d4e-4f4a-9e0b-3b7c2e9d8f10"))
        #expect(parameters["existing"] == .object(["a": .int(1)]))
        #expect(parameters["tags"] == .array([.string("new"), .int(2), .null]))
        #expect(parameters["metadata"] == .object(["order": .int(7), "gift": .bool(true)]))
        #expect(parameters["count"] == .int(1200))
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
        #expect(Parameters([("x", ParameterValue.int(1)), ("x", .int(2))], uniquingKeysWith: { first, _ in first }) == ["x": 1])
        #expect(Parameters().isEmpty)
        #expect(parameters.map(\.key) == ["c"])
    }
}
