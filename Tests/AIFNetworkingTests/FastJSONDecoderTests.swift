@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import Foundation
import Testing

/// Any JSON value, decoded through a single-value container: what both decoders must agree on.
private indirect enum AnyJSON: Decodable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([AnyJSON].self) { self = .array(value) }
        else { self = .object(try container.decode([String: AnyJSON].self)) }
    }

    /// A random document, with strings that need escaping.
    static func random(depth: Int, using generator: inout some RandomNumberGenerator) -> String {
        let pick = depth > 3 ? Int.random(in: 0..<4, using: &generator) : Int.random(in: 0..<6, using: &generator)
        switch pick {
        case 0: return "null"
        case 1: return Bool.random(using: &generator) ? "true" : "false"
        case 2:
            let forms = ["0", "-0", "17", "-42", "3.25", "-0.5e3", "1E-2", "123456789012345678", "9007199254740993", "6.02214076e23"]
            return forms.randomElement(using: &generator)!
        case 3:
            let pieces = ["plain", "é", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\ud83d\\ude00", "😀", "tab\\t", " ", "\\u0000"]
            return "\"" + (0..<Int.random(in: 0..<4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined() + "\""
        case 4:
            return "[" + (0..<Int.random(in: 0..<4, using: &generator)).map { _ in random(depth: depth + 1, using: &generator) }.joined(separator: ", ") + "]"
        default:
            let members = (0..<Int.random(in: 0..<4, using: &generator)).map { index in
                "\"k\(index)\" : " + random(depth: depth + 1, using: &generator)
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }
}

private struct Catalogue: Decodable, Equatable {
    struct Item: Decodable, Equatable {
        var id: Int
        var title: String
        var priceCents: Int
        var inStock: Bool
        var tags: [String]?
        var rating: Double?
    }

    var page: Int
    var pageSize: Int
    var items: [Item]
    var extra: [String: Int]
}

private enum Colour: String, Decodable { case red, green }

private struct Kinds: Decodable, Equatable {
    var int8: Int8
    var uint64: UInt64
    var int64: Int64
    var float: Float
    var colour: Colour
    var url: URL
    var data: Data
    var decimal: Decimal
    var nested: [[Int]]
    var optionalMissing: String?
    var optionalNull: Int?
}

private class Base: Decodable {
    var id: Int
    enum CodingKeys: String, CodingKey { case id }
    required init(from decoder: any Decoder) throws {
        id = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .id)
    }
}

private final class Derived: Base {
    var name: String
    enum DerivedKeys: String, CodingKey { case name, base }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DerivedKeys.self)
        name = try container.decode(String.self, forKey: .name)
        try super.init(from: container.superDecoder(forKey: .base))
    }
}

@Suite("FastJSONDecoder: agrees with Foundation's JSONDecoder")
struct FastJSONDecoderTests {
    let fast = FastJSONDecoder()

    @Test func randomDocumentsDecodeAlike() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let text = AnyJSON.random(depth: 0, using: &generator)
            let data = Data(text.utf8)
            let expected = try JSONDecoder().decode(AnyJSON.self, from: data)
            #expect(try fast.decode(AnyJSON.self, from: data) == expected, "\(text)")
        }
    }

    @Test func structsWithSnakeCaseKeys() throws {
        let json = #"""
        {"page": 2, "page_size": 3, "extra": {"a": 1, "b_c": 2},
         "items": [{"id": 1, "title": "Cup", "price_cents": 990, "in_stock": true, "tags": ["x", "y"]},
                   {"in_stock": false, "price_cents": 1, "title": "Kettle \"Pro\"", "id": 2, "rating": 4.5, "tags": null}]}
        """#
        let foundation = JSONDecoder()
        foundation.keyDecodingStrategy = .convertFromSnakeCase
        let expected = try foundation.decode(Catalogue.self, from: Data(json.utf8))
        let decoded = try FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase).decode(Catalogue.self, from: Data(json.utf8))
        #expect(decoded == expected)
        #expect(decoded.items[1].title == "Kettle \"Pro\"")
        #expect(decoded.extra == ["a": 1, "b_c": 2], "dictionary keys are data, not converted")
    }

    @Test func snakeCaseMatchingRules() {
        func match(_ name: String, _ key: String, snake: Bool = true) -> Bool {
            let nameBytes = Array(name.utf8)
            let keyBytes = Array(key.utf8)
            return nameBytes.withUnsafeBufferPointer { name in
                keyBytes.withUnsafeBufferPointer { TapeDecoder.matches(name, $0, snake: snake) }
            }
        }
        #expect(match("price_cents", "priceCents"))
        #expect(match("a_b_c", "aBC"))
        #expect(match("_private", "_private"))
        #expect(match("trailing_", "trailing_"))
        #expect(match("__", "__"))
        #expect(match("double__under", "doubleUnder"))
        #expect(!match("price_cents", "price_cents"))
        #expect(!match("pricecents", "priceCents"))
        #expect(!match("price_cents", "priceCent"))
        #expect(match("id", "id"))
        #expect(match("", ""))
        #expect(!match("id", "ID"))
        #expect(!match("id", "ids"))
        // Without the strategy, names are compared as they stand.
        #expect(match("price_cents", "price_cents", snake: false))
        #expect(!match("price_cents", "priceCents", snake: false))
        #expect(!match("title", "titles", snake: false))
    }

    @Test func everyKindOfValue() throws {
        let json = #"""
        {"int8": -128, "uint64": 18446744073709551615, "int64": -9223372036854775808, "float": 1.5,
         "colour": "green", "url": "https://shop.test/a?b=c", "data": "aGVsbG8=", "decimal": 12.345,
         "nested": [[1, 2], [], [3]], "optionalNull": null}
        """#
        let expected = try JSONDecoder().decode(Kinds.self, from: Data(json.utf8))
        let decoded = try fast.decode(Kinds.self, from: Data(json.utf8))
        #expect(decoded == expected)
        #expect(decoded.data == Data("hello".utf8))
        #expect(decoded.decimal == Decimal(string: "12.345"))
    }

    @Test func dateStrategies() throws {
        struct Stamp: Decodable { var at: Date }
        let iso = FastJSONDecoder(dateDecodingStrategy: .iso8601)
        #expect(try iso.decode(Stamp.self, from: Data(#"{"at": "2026-11-22T10:00:00Z"}"#.utf8)).at == Date(timeIntervalSince1970: 1_795_341_600))
        #expect(try iso.decode(Stamp.self, from: Data(#"{"at": "2026-11-22T10:00:00.250Z"}"#.utf8)).at == Date(timeIntervalSince1970: 1_795_341_600.25))
        let seconds = FastJSONDecoder(dateDecodingStrategy: .secondsSince1970)
        #expect(try seconds.decode(Stamp.self, from: Data(#"{"at": 1795341600}"#.utf8)).at == Date(timeIntervalSince1970: 1_795_341_600))
        let milliseconds = FastJSONDecoder(dateDecodingStrategy: .millisecondsSince1970)
        #expect(try milliseconds.decode(Stamp.self, from: Data(#"{"at": 1795341600500}"#.utf8)).at == Date(timeIntervalSince1970: 1_795_341_600.5))
        #expect(try fast.decode(Stamp.self, from: Data(#"{"at": 10}"#.utf8)).at == Date(timeIntervalSinceReferenceDate: 10))
        #expect(throws: DecodingError.self) { try iso.decode(Stamp.self, from: Data(#"{"at": "yesterday"}"#.utf8)) }
    }

    /// ISO 8601 with offsets and a date alone; a pattern; a function of the caller's — each
    /// failure naming the value's path and what was found.
    @Test func moreDateStrategies() throws {
        struct Stamp: Decodable { var at: Date }
        struct Dated: Decodable { var release: Stamp }
        let iso = FastJSONDecoder(dateDecodingStrategy: .iso8601)
        #expect(try iso.decode(Stamp.self, from: Data(#"{"at": "2026-11-22"}"#.utf8)).at == Date(timeIntervalSince1970: 1_795_305_600))
        #expect(try iso.decode(Stamp.self, from: Data(#"{"at": "2026-11-22T11:00:00+01:00"}"#.utf8)).at == Date(timeIntervalSince1970: 1_795_341_600))
        for wrong in ["2026-11-2", "2026-11-22T", "22-11-2026", "2026/11/22"] {
            let error = #expect(throws: DecodingError.self) { try iso.decode(Dated.self, from: Data(#"{"release": {"at": "\#(wrong)"}}"#.utf8)) }
            guard case .dataCorrupted(let context)? = error else { continue }
            #expect(context.codingPath.map(\.stringValue) == ["release", "at"])
            #expect(context.debugDescription.contains("found \"\(wrong)\""), "\(context.debugDescription)")
        }

        let formatted = FastJSONDecoder(dateDecodingStrategy: .formatted("yyyy-MM-dd HH:mm:ss"))
        #expect(try formatted.decode(Stamp.self, from: Data(#"{"at": "2026-11-22 10:00:00"}"#.utf8)).at == Date(timeIntervalSince1970: 1_795_341_600))
        let zoned = FastJSONDecoder(dateDecodingStrategy: .formatted("dd/MM/yyyy HH:mm Z"))
        #expect(try zoned.decode(Stamp.self, from: Data(#"{"at": "22/11/2026 11:00 +0100"}"#.utf8)).at == Date(timeIntervalSince1970: 1_795_341_600))
        let mismatch = #expect(throws: DecodingError.self) { try formatted.decode(Stamp.self, from: Data(#"{"at": "2026-11-22T10:00:00Z"}"#.utf8)) }
        #expect("\(mismatch.map { "\($0)" } ?? "")".contains(#"Expected a date in the format "yyyy-MM-dd HH:mm:ss", found "2026-11-22T10:00:00Z""#))

        // A function: days since an epoch of the API's, as a number or a "d<number>" string.
        let days = FastJSONDecoder(dateDecodingStrategy: .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) { return Date(timeIntervalSince1970: Double(number) * 86_400) }
            let text = try container.decode(String.self)
            guard text.hasPrefix("d"), let number = Int(text.dropFirst()) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a day number: \(text)")
            }
            return Date(timeIntervalSince1970: Double(number) * 86_400)
        })
        #expect(try days.decode([Date].self, from: Data(#"[20779, "d20780"]"#.utf8)) == [Date(timeIntervalSince1970: 1_795_305_600), Date(timeIntervalSince1970: 1_795_392_000)])
        let refused = #expect(throws: DecodingError.self) { try days.decode(Dated.self, from: Data(#"{"release": {"at": "soon"}}"#.utf8)) }
        guard case .dataCorrupted(let context)? = refused else { return }
        #expect(context.codingPath.map(\.stringValue) == ["release", "at"])
        #expect(context.debugDescription == "not a day number: soon")
        // A parser equals its copies only.
        let strategy = FastJSONDecoder.DateDecodingStrategy.custom { _ in Date() }
        #expect(strategy == strategy)
        #expect(strategy != .custom { _ in Date() })
    }

    @Test func superDecodersAndClasses() throws {
        let derived = try fast.decode(Derived.self, from: Data(#"{"name": "n", "base": {"id": 7}}"#.utf8))
        #expect(derived.name == "n")
        #expect(derived.id == 7)
    }

    @Test func wholeNumbersInOtherFormsAreIntegers() throws {
        #expect(try fast.decode([Int].self, from: Data("[1.0, 2e2, -3E0]".utf8)) == [1, 200, -3])
        #expect(throws: DecodingError.self) { try fast.decode([Int].self, from: Data("[1.5]".utf8)) }
        #expect(throws: DecodingError.self) { try fast.decode([UInt8].self, from: Data("[256]".utf8)) }
        #expect(throws: DecodingError.self) { try fast.decode([UInt].self, from: Data("[-1]".utf8)) }
        #expect(throws: DecodingError.self) { try fast.decode([Int].self, from: Data("[99999999999999999999]".utf8)) }
        #expect(try fast.decode([Double].self, from: Data("[0.1, -2.5e-3, 123456789012345678901234567890]".utf8)) == [0.1, -2.5e-3, Double("123456789012345678901234567890")!])
    }

    @Test(arguments: [
        ("", "a value"), ("{", "a member name"), (#"{"a" 1}"#, "':'"), ("[1,]", "a value"), ("[1 2]", "',' or ']'"),
        (#"{"a": 1,}"#, "a member name"), ("01", "after the end"), ("tru", "true"), ("\"abc", "unterminated"),
        ("\"a\u{01}b\"", "control character"), ("1.", "decimal point"), ("-", "a digit"), ("[1] x", "after the end"),
        ("nul", "null"), ("{\"a\": 1e}", "exponent"),
    ])
    func malformedDocumentsAreNamed(json: String, expected: String) {
        let error = #expect(throws: DecodingError.self) { try fast.decode(AnyJSON.self, from: Data(json.utf8)) }
        guard case .dataCorrupted(let context)? = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription.contains("not valid JSON"))
        #expect(context.debugDescription.contains(expected), "\(context.debugDescription)")
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: DecodingError.self) { try fast.decode(AnyJSON.self, from: Data(deep.utf8)) }
        let fine = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        #expect(throws: Never.self) { try fast.decode(AnyJSON.self, from: Data(fine.utf8)) }
        let over = String(repeating: "[", count: 129) + String(repeating: "]", count: 129)
        let error = #expect(throws: DecodingError.self) { try fast.decode(AnyJSON.self, from: Data(over.utf8)) }
        #expect(String(describing: error).contains("nested deeper than 128 levels"))
    }

    /// Every key `allKeys` lists under the snake-case strategy is one a lookup finds, whatever
    /// the letters (the listing and the lookup once upper-cased differently: `a_é`).
    @Test func snakeCaseKeysListedAreKeysFound() throws {
        struct Everything: Decodable {
            var values: [String: Int] = [:]
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: NameKey.self)
                for key in container.allKeys {
                    values[key.stringValue] = try container.decode(Int.self, forKey: key)
                }
            }
        }
        let decoder = FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase)
        let json = #"{"a_é": 6, "price_cents": 1, "_private_x": 2, "ünï_côdé": 3, "x_1": 4, "plain": 5, "a__b_": 7}"#
        let decoded = try decoder.decode(Everything.self, from: Data(json.utf8))
        #expect(decoded.values.count == 7)
        #expect(decoded.values["priceCents"] == 1)
        #expect(decoded.values["_privateX"] == 2)
        #expect(decoded.values["plain"] == 5)
    }

    @Test func numbersAtTheEdges() throws {
        // Beyond Float's range is an error, not infinity; within it, a value.
        #expect(throws: DecodingError.self) { try fast.decode([Float].self, from: Data("[1e39]".utf8)) }
        #expect(throws: DecodingError.self) { try fast.decode([Float].self, from: Data("[-3.5e38]".utf8)) }
        #expect(try fast.decode([Float].self, from: Data("[3.4e38, 1.5]".utf8)) == [3.4e38, 1.5])
        // -0 keeps its sign.
        let zero = try fast.decode([Double].self, from: Data("[-0, -0.0, 0]".utf8))
        #expect(zero.map(\.sign) == [.minus, .minus, .plus])
        // Whole numbers written with an exponent or a fraction, exactly.
        #expect(try fast.decode([Int].self, from: Data("[100000000000000000000e-10, 1.0, 2e3, 9007199254740993e0, -1.20e1]".utf8))
            == [10_000_000_000, 1, 2000, 9_007_199_254_740_993, -12])
        #expect(try fast.decode([Int64].self, from: Data("[9223372036854775807.000e0, -922337203685477580.8e1]".utf8)) == [.max, .min])
        for notWhole in ["1.5", "1e-1", "9223372036854775808", "1e19", "12345678901234567890123e-2", "1e1000000000"] {
            #expect(throws: DecodingError.self, "\(notWhole)") { try fast.decode([Int].self, from: Data("[\(notWhole)]".utf8)) }
        }
        #expect(try fast.decode([Int].self, from: Data("[0e1000000000, 0.000e-5]".utf8)) == [0, 0])
        #expect(try fast.decode([UInt8].self, from: Data("[2.55e2]".utf8)) == [255])
    }

    /// A member name that is not text is a malformed document, not a member `allKeys` skips.
    @Test func memberNamesMustBeText() throws {
        var invalidUTF8 = Array(#"{"ab": 1}"#.utf8)
        invalidUTF8[2] = 0xFF
        for bytes in [invalidUTF8, Array(#"{"a\x": 1}"#.utf8), Array(#"{"\ud800": 1}"#.utf8)] {
            let error = #expect(throws: DecodingError.self) { try fast.decode([String: Int].self, from: Data(bytes)) }
            #expect(String(describing: error).contains("member name"), "\(String(describing: error))")
        }
        #expect(try fast.decode([String: Int].self, from: Data(#"{"caf\u00e9": 1, "é": 2}"#.utf8)) == ["café": 1, "é": 2])
    }

    /// A recursive type as deep as the limit allows decodes on every thread loads decode on —
    /// the transport's own (the smallest stack), the load executor's, the global executor's —
    /// and one level more is an error, never a stack overflow. (The test suite is a debug
    /// build, where each level takes the most stack.)
    @Test func theDepthLimitHoldsOnEveryDecodingThread() async throws {
        final class Nest: Decodable, Sendable {
            let a: Nest?
            var depth: Int { 1 + (a?.depth ?? 0) }
        }
        func document(depth: Int) -> Data {
            Data((String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)).utf8)
        }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let executors: [(String, (any TaskExecutor)?)] = [
            // The load executor's threads are Dispatch's workers, as the global executor's are.
            ("transport thread", transport.taskExecutor), ("global executor", nil),
        ]
        for (name, executor) in executors {
            let decoded = try await Task(executorPreference: executor) {
                try FastJSONDecoder().decode(Nest.self, from: document(depth: 128)).depth
            }.value
            #expect(decoded == 128, "\(name)")
            let refused = await Task(executorPreference: executor) {
                (try? FastJSONDecoder().decode(Nest.self, from: document(depth: 129))) == nil
            }.value
            #expect(refused, "\(name)")
        }
    }

    @Test func badEscapesAndInvalidUTF8AreRefused() {
        for json in [#"["\x"]"#, #"["\u12"]"#, #"["\ud800"]"#, #"["\ud800\u0041"]"#] {
            #expect(throws: DecodingError.self, "\(json)") { try fast.decode([String].self, from: Data(json.utf8)) }
        }
        var bytes = Array(#"["ab"]"#.utf8)
        bytes[3] = 0xFF
        #expect(throws: DecodingError.self) { try fast.decode([String].self, from: Data(bytes)) }
    }

    /// Strings are scanned eight bytes at a time: a quote, backslash, control character or
    /// non-ASCII byte at every offset of strings of every length up to 40 must still be found.
    @Test func everyOffsetOfEveryShortStringIsScanned() throws {
        let specials: [(raw: String, decoded: String?)] = [
            ("\\\"", "\""), ("\\\\", "\\"), ("\\n", "\n"), ("\u{01}", nil), ("\u{1F}", nil), ("\t", nil), ("é", "é"), ("😀", "😀"), ("\u{7F}", "\u{7F}"),
        ]
        for length in 0...40 {
            let plain = String(repeating: "a", count: length)
            let decoded = try fast.decode([String].self, from: Data("[\"\(plain)\",\"x\"]".utf8))
            #expect(decoded == [plain, "x"])
            for offset in 0...length {
                for special in specials {
                    let raw = String(plain.prefix(offset)) + special.raw + String(plain.dropFirst(offset))
                    let json = Data("[\"\(raw)\",\"x\"]".utf8)
                    if let expected = special.decoded {
                        let value = try fast.decode([String].self, from: json)
                        #expect(value == [String(plain.prefix(offset)) + expected + String(plain.dropFirst(offset)), "x"], "\(raw.debugDescription)")
                    } else {
                        #expect(throws: DecodingError.self, "\(raw.debugDescription)") { try fast.decode([String].self, from: json) }
                    }
                }
            }
        }
    }

    @Test func errorsCarryThePath() throws {
        let json = #"{"page": 1, "page_size": 1, "extra": {}, "items": [{"id": 1, "title": "a", "price_cents": 1, "in_stock": true}, {"id": "two"}]}"#
        let decoder = FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase)
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Catalogue.self, from: Data(json.utf8)) }
        guard case .typeMismatch(_, let context)? = error else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["items", "1", "id"])

        let missing = #expect(throws: DecodingError.self) { try decoder.decode(Catalogue.self, from: Data(#"{"page": 1}"#.utf8)) }
        guard case .keyNotFound(let key, _)? = missing else {
            Issue.record("expected keyNotFound")
            return
        }
        #expect(key.stringValue == "pageSize")

        let null = #expect(throws: DecodingError.self) { try fast.decode([String: Int].self, from: Data(#"{"a": null}"#.utf8)) }
        guard case .valueNotFound? = null else {
            Issue.record("expected valueNotFound")
            return
        }
        let described = APIError.describeDecoding(error!, body: Data(json.utf8), contentType: "application/json")
        #expect(described == "expected Int at items[1].id: Expected a number but found a string instead.")
    }

    @Test func unkeyedContainersCountAndEnd() throws {
        struct Pair: Decodable, Equatable {
            var first: Int
            var rest: [String]
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                #expect(container.count == 3)
                first = try container.decode(Int.self)
                #expect(try container.decodeNil())
                rest = [try container.decode(String.self)]
                #expect(container.isAtEnd)
                #expect(throws: DecodingError.self) { try container.decode(Int.self) }
            }
        }
        #expect(try fast.decode(Pair.self, from: Data(#"[1, null, "x"]"#.utf8)).rest == ["x"])
    }
}
