public import Foundation
@_spi(CrossModule) import AIFTransport

/// A JSON decoder for `Decodable` types, several times faster than Foundation's `JSONDecoder`
/// on Linux for the small documents APIs return: the body is parsed once into a flat token list,
/// values are converted only when asked for, and members are looked up in document order.
///
/// It is what managers decode with unless a manager or its service names another decoder.
/// Differences from `JSONDecoder`: no `userInfo`, and the strategies below are the ones offered.
/// Errors are `DecodingError`s with the coding path, like `JSONDecoder`'s.
public struct FastJSONDecoder: ContentDecoder, Hashable {
    /// How JSON member names map to coding keys.
    public enum KeyDecodingStrategy: Sendable, Hashable {
        /// Names are the keys.
        case useDefaultKeys
        /// `snake_case` names match `camelCase` keys: an underscore followed by a letter
        /// matches that letter upper-cased (`price_cents` ↔ `priceCents`); leading and trailing
        /// underscores match themselves.
        case convertFromSnakeCase
    }

    /// How `Date` values are read.
    public enum DateDecodingStrategy: Sendable, Hashable {
        /// As `Date` decodes itself: seconds since 2001-01-01.
        case deferredToDate
        /// A number of seconds since 1970.
        case secondsSince1970
        /// A number of milliseconds since 1970.
        case millisecondsSince1970
        /// An ISO 8601 string: a date and time (`2026-11-22T10:00:00Z`, with fractional seconds
        /// or an offset such as `+01:00` too), or a date alone (`2026-11-22`, read as midnight UTC).
        case iso8601
        /// A string in a `DateFormatter` pattern (`"yyyy-MM-dd HH:mm:ss"`), read in the POSIX
        /// locale and, unless the pattern reads a zone, in UTC.
        case formatted(String)
        /// Read by a function of yours; see ``custom(_:)``.
        case parsed(DateParser)

        /// Dates read by `parse`, given a decoder at the value (as `JSONDecoder`'s `.custom`):
        ///
        /// ```swift
        /// decoder.dateDecodingStrategy = .custom { decoder in
        ///     let text = try decoder.singleValueContainer().decode(String.self)
        ///     guard let date = Self.releaseDate(text) else {
        ///         throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a release date: \(text)"))
        ///     }
        ///     return date
        /// }
        /// ```
        public static func custom(_ parse: @escaping @Sendable (any Decoder) throws -> Date) -> DateDecodingStrategy {
            .parsed(DateParser(parse))
        }
    }

    /// A function that reads a `Date`, for ``DateDecodingStrategy/custom(_:)``. Two are equal
    /// when they are the same value (copies of one parser), since functions cannot be compared.
    public struct DateParser: Sendable, Hashable {
        private final class Function: Sendable {
            let parse: @Sendable (any Decoder) throws -> Date
            init(_ parse: @escaping @Sendable (any Decoder) throws -> Date) { self.parse = parse }
        }

        private let function: Function

        /// Wraps `parse`.
        public init(_ parse: @escaping @Sendable (any Decoder) throws -> Date) {
            function = Function(parse)
        }

        /// Reads a date with `decoder` at the value.
        public func callAsFunction(_ decoder: any Decoder) throws -> Date {
            try function.parse(decoder)
        }

        public static func == (left: DateParser, right: DateParser) -> Bool { left.function === right.function }
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(function)) }
    }

    /// How member names map to keys; the names themselves by default.
    public var keyDecodingStrategy: KeyDecodingStrategy
    /// How dates are read; as `Date` decodes itself by default.
    public var dateDecodingStrategy: DateDecodingStrategy

    /// Creates a decoder.
    public init(keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys, dateDecodingStrategy: DateDecodingStrategy = .deferredToDate) {
        self.keyDecodingStrategy = keyDecodingStrategy
        self.dateDecodingStrategy = dateDecodingStrategy
    }

    /// Decodes a value of `type` from a JSON document.
    ///
    /// - Parameters:
    ///   - type: The type.
    ///   - data: The document.
    /// - Returns: The value.
    /// - Throws: `DecodingError`: `dataCorrupted` for invalid JSON (with the byte offset),
    ///   `keyNotFound`, `typeMismatch`, `valueNotFound` with the path to the value.
    public func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try decode(type, from: JSONTape(decoding: data), at: 0)
    }

    /// Decodes the value at token `index` of a document parsed already (by the service's
    /// application-error rule, or to find an envelope's content).
    package func decode<Value: Decodable>(_ type: Value.Type, from tape: JSONTape, at index: Int) throws -> Value {
        try TapeDecoder(tape: tape, options: self).unwrap(type, at: index)
    }
}

/// A member name as a coding key, for coding paths.
struct NameKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// `[String: Value]`, decoded with its keys as they are written.
protocol StringKeyedDictionary: SendableMetatype {
    static func decode(from decoder: TapeDecoder, at index: Int, key: (any CodingKey)?) throws -> Self
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    static func decode(from decoder: TapeDecoder, at index: Int, key: (any CodingKey)?) throws -> Self {
        try decoder.expect(.object, at: index, "a dictionary", key: key)
        if let key { decoder.path.append(key) }
        defer { if key != nil { decoder.path.removeLast() } }
        let count = Int(decoder.token(index).count)
        var result = [String: Value](minimumCapacity: count)
        var name = index + 1
        for _ in 0..<count {
            let text = try decoder.text(of: decoder.token(name), key: nil)
            result[text] = try decoder.unwrap(Value.self, at: name + 1, key: NameKey(text))
            name = Int(decoder.token(name + 1).next)
        }
        return result
    }
}

/// `[Element]`, decoded as the standard library's `Array.init(from:)` does (an unkeyed
/// container, element after element), into storage reserved for the element count at once
/// instead of regrown by unspecialised appends.
protocol TapeDecodableArray: SendableMetatype {
    static func decodeElements(from decoder: TapeDecoder) throws -> Self
}

extension Array: TapeDecodableArray where Element: Decodable {
    static func decodeElements(from decoder: TapeDecoder) throws -> Self {
        try decoder.expect(.array, at: decoder.current, "an array")
        var container = UnkeyedContainer(decoder: decoder, array: decoder.current, codingPath: decoder.path)
        var elements: [Element] = []
        elements.reserveCapacity(container.count ?? 0)
        while !container.isAtEnd {
            elements.append(try container.decode(Element.self))
        }
        return elements
    }
}

/// An array index as a coding key, for coding paths.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

/// The `Decoder` over a tape. One instance serves the whole document: `current` and `path` are
/// moved to each value while it decodes and restored afterwards.
final class TapeDecoder: Decoder {
    let tape: JSONTape
    let options: FastJSONDecoder
    // Unchecked exclusivity: a decoder is used by one thread, for one document, and no access
    // to these overlaps another (each is read or written in a single statement), so the
    // runtime's dynamic checks (two calls per access) would only cost time.
    @exclusivity(unchecked) var current = 0
    @exclusivity(unchecked) var path: [any CodingKey] = []
    /// The last member found, to start the next lookup in the same object after it.
    @exclusivity(unchecked) var hintObject = -1
    @exclusivity(unchecked) var hintName = 0
    @exclusivity(unchecked) var hintOrdinal = 0
    /// Types lately found to be neither arrays nor (under the snake-case strategy) string-keyed
    /// dictionaries: the elements of an array ask the same question over and over, and the
    /// runtime's conformance lookup is not free. A few slots, reused in turn.
    @exclusivity(unchecked) var plainTypes: (ObjectIdentifier?, ObjectIdentifier?, ObjectIdentifier?, ObjectIdentifier?) = (nil, nil, nil, nil)
    @exclusivity(unchecked) var nextPlainSlot = 0

    init(tape: JSONTape, options: FastJSONDecoder) {
        self.tape = tape
        self.options = options
    }

    var codingPath: [any CodingKey] { path }

    /// Puts the decoder's path at a container's before the container reads a value.
    ///
    /// Values are decoded depth first, so a container in use is almost always at the depth the
    /// path is at, with the same keys: the path is only replaced when the depth differs (a
    /// container kept and used after a sibling's). Comparing depths instead of keys keeps
    /// each read free of copying; a caller interleaving two sibling containers at one depth could
    /// see the other's keys in an error's path, never a wrong value.
    @inline(__always) func align(to containerPath: [any CodingKey]) {
        if path.count != containerPath.count { path = containerPath }
    }

    /// ``align(to:)`` for a keyed container that may keep only its path's length: a nested
    /// one's own path replaces the decoder's; for the decoder's own, the keys past its depth
    /// (a nested container's, read meanwhile) are dropped.
    @inline(never) func realign(depth: Int, ownPath: [any CodingKey]?) {
        if let ownPath {
            path = ownPath
        } else if path.count > depth {
            path.removeLast(path.count - depth)
        }
    }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    @inline(__always) func token(_ index: Int) -> JSONTape.Token { tape.tokens[index] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try expect(.object, at: current, "a dictionary")
        return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, object: current))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try expect(.array, at: current, "an array")
        return UnkeyedContainer(decoder: self, array: current, codingPath: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self, index: current, codingPath: path)
    }

    /// A decoder of its own for one value (for `superDecoder`).
    func detached(at index: Int, path: [any CodingKey]) -> TapeDecoder {
        let decoder = TapeDecoder(tape: tape, options: options)
        decoder.current = index
        decoder.path = path
        return decoder
    }

    // MARK: Values

    func expect(_ kind: JSONTape.Kind, at index: Int, _ description: String, key: (any CodingKey)? = nil) throws {
        let found = token(index).kind
        guard found != kind else { return }
        let context = DecodingError.Context(codingPath: key.map { path + [$0] } ?? path, debugDescription: "Expected \(description) but found \(Self.describe(found)) instead.")
        if found == .null { throw DecodingError.valueNotFound(Any.self, context) }
        throw DecodingError.typeMismatch(Any.self, context)
    }

    static func describe(_ kind: JSONTape.Kind) -> String {
        switch kind {
        case .object: "a dictionary"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .true, .false: "a boolean"
        case .null: "null"
        }
    }

    func mismatch<T>(_ type: T.Type, at index: Int, key: (any CodingKey)?, _ expected: String) -> DecodingError {
        let found = token(index).kind
        let context = DecodingError.Context(codingPath: key.map { path + [$0] } ?? path, debugDescription: "Expected \(expected) but found \(Self.describe(found)) instead.")
        return found == .null ? .valueNotFound(type, context) : .typeMismatch(type, context)
    }

    func isNull(_ index: Int) -> Bool { token(index).kind == .null }

    func bool(at index: Int, key: @autoclosure () -> (any CodingKey)?) throws -> Bool {
        switch token(index).kind {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, at: index, key: key(), "a boolean")
        }
    }

    func string(at index: Int, key: @autoclosure () -> (any CodingKey)?) throws -> String {
        let token = token(index)
        guard token.kind == .string else { throw mismatch(String.self, at: index, key: key(), "a string") }
        return try text(of: token, key: key())
    }

    func text(of token: JSONTape.Token, key: @autoclosure () -> (any CodingKey)?) throws -> String {
        let range = Int(token.start)..<Int(token.end)
        if !token.escaped {
            return try tape.bytes.withUnsafeBufferPointer { buffer in
                let bytes = UnsafeBufferPointer(rebasing: buffer[range])
                // ASCII (most keys and values) is valid as it stands; `String(validating:)` is
                // an unspecialised generic call, several times slower for short strings.
                if JSONTape.isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: key().map { path + [$0] } ?? path, debugDescription: "The string is not valid UTF-8."))
                }
                return text
            }
        }
        guard let bytes = JSONTape.unescape(tape.bytes[range]), let text = String(validating: bytes, as: UTF8.self) else {
            throw DecodingError.dataCorrupted(.init(codingPath: key().map { path + [$0] } ?? path, debugDescription: "The string has an invalid escape or is not valid UTF-8."))
        }
        return text
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type, at index: Int, key: @autoclosure () -> (any CodingKey)?) throws -> T {
        let token = token(index)
        guard token.kind == .number else { throw mismatch(type, at: index, key: key(), "a number") }
        let bytes = tape.bytes
        var position = Int(token.start)
        let end = Int(token.end)
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var value: T = 0
        var exact = true
        while position < end {
            let digit = bytes[position] &- UInt8(ascii: "0")
            guard digit < 10 else {
                exact = false
                break
            }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(T(digit)) : shifted.addingReportingOverflow(T(digit))
            guard !overflow1, !overflow2 else {
                exact = false
                break
            }
            value = next
            position += 1
        }
        if exact { return value }
        // 1.0, 2e3, 100000000000000000000e-10: accepted when the number is a whole one that
        // fits, worked out from its digits (a Double would round past 2^53).
        guard let whole = Self.wholeNumber(T.self, bytes[Int(token.start)..<end]) else {
            throw notRepresentable(type, token, key: key())
        }
        return whole
    }

    /// The value of a JSON number (checked by the parser) when it is a whole number that fits
    /// in `T`, exactly; `nil` otherwise.
    static func wholeNumber<T: FixedWidthInteger>(_ type: T.Type, _ text: ArraySlice<UInt8>) -> T? {
        var index = text.startIndex
        let negative = text[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var inFraction = false
        while index < text.endIndex, text[index] != UInt8(ascii: "e"), text[index] != UInt8(ascii: "E") {
            let byte = text[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else {
                digits.append(byte &- UInt8(ascii: "0"))
                if inFraction { fractionDigits += 1 }
            }
            index += 1
        }
        var exponent = 0
        if index < text.endIndex {
            index += 1
            let negativeExponent = text[index] == UInt8(ascii: "-")
            if text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") { index += 1 }
            while index < text.endIndex {
                // Past a million the answer is settled (zero, or too large): stop counting.
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(text[index] &- UInt8(ascii: "0")) }
                index += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        // digits × 10^shift: a negative shift must only remove zeros.
        var shift = exponent - fractionDigits
        while shift < 0, let last = digits.last {
            guard last == 0 else { return nil }
            digits.removeLast()
            shift += 1
        }
        var value: T = 0
        for digit in digits {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(T(digit)) : shifted.addingReportingOverflow(T(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = next
        }
        while shift > 0, value != 0 {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = shifted
            shift -= 1
        }
        return value
    }

    /// A JSON number as a `Float`: refused when it is beyond `Float`'s range rather than
    /// turned into infinity.
    func float(at index: Int, key: @autoclosure () -> (any CodingKey)?) throws -> Float {
        let double = try double(at: index, key: key())
        let float = Float(double)
        guard float.isFinite else { throw notRepresentable(Float.self, token(index), key: key()) }
        return float
    }

    func notRepresentable<T>(_ type: T.Type, _ token: JSONTape.Token, key: (any CodingKey)?) -> DecodingError {
        .dataCorrupted(.init(codingPath: key.map { path + [$0] } ?? path, debugDescription: "Parsed JSON number <\(numberText(token))> does not fit in \(type)."))
    }

    func numberText(_ token: JSONTape.Token) -> String {
        String(decoding: tape.bytes[Int(token.start)..<Int(token.end)], as: UTF8.self)
    }

    func double(at index: Int, key: @autoclosure () -> (any CodingKey)?) throws -> Double {
        let token = token(index)
        guard token.kind == .number else { throw mismatch(Double.self, at: index, key: key(), "a number") }
        // Whole numbers of up to 15 digits are exact in a Double; the rest go through strtod.
        let length = Int(token.end - token.start)
        if length <= 15 {
            var value = 0
            var simple = true
            var position = Int(token.start)
            let negative = tape.bytes[position] == UInt8(ascii: "-")
            if negative { position += 1 }
            while position < Int(token.end) {
                let digit = tape.bytes[position] &- UInt8(ascii: "0")
                guard digit < 10 else {
                    simple = false
                    break
                }
                value = value * 10 + Int(digit)
                position += 1
            }
            // Negated as a Double, so that -0 keeps its sign.
            if simple { return negative ? -Double(value) : Double(value) }
        }
        guard let value = Double(numberText(token)), value.isFinite else {
            throw notRepresentable(Double.self, token, key: key())
        }
        return value
    }

    /// Decodes `type` from the value at `index` (special-casing the types Foundation's decoder
    /// also treats specially).
    func unwrap<T: Decodable>(_ type: T.Type, at index: Int, key: (any CodingKey)? = nil) throws -> T {
        if type == Date.self, options.dateDecodingStrategy != .deferredToDate {
            return try date(at: index, key: key) as! T
        }
        if type == Data.self {
            let text = try string(at: index, key: key)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: key.map { path + [$0] } ?? path, debugDescription: "Encountered Data is not valid Base64."))
            }
            return data as! T
        }
        if type == URL.self {
            let text = try string(at: index, key: key)
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: key.map { path + [$0] } ?? path, debugDescription: "Invalid URL string."))
            }
            return url as! T
        }
        if type == Decimal.self {
            let token = token(index)
            guard token.kind == .number, let decimal = Decimal(string: numberText(token), locale: Locale(identifier: "en_US_POSIX")) else {
                throw mismatch(type, at: index, key: key, "a number")
            }
            return decimal as! T
        }
        if type == JSONValue.self { return JSONValue(tape: tape, at: index) as! T }
        let identifier = ObjectIdentifier(type)
        let isPlain = plainTypes.0 == identifier || plainTypes.1 == identifier || plainTypes.2 == identifier || plainTypes.3 == identifier
        var array: (any TapeDecodableArray.Type)?
        if !isPlain {
            switch Self.shape(of: type) {
            case .plain:
                rememberPlain(identifier)
            case .array(let arrayType):
                array = arrayType
            case .stringKeyedDictionary(let dictionary):
                if options.keyDecodingStrategy == .convertFromSnakeCase {
                    // Dictionary keys are data: like JSONDecoder, the key strategy leaves them alone.
                    return try dictionary.decode(from: self, at: index, key: key) as! T
                }
                rememberPlain(identifier)
            }
        }
        return try moved(to: index, key: key) {
            if let array { return try array.decodeElements(from: self) as! T }
            return try T(from: self)
        }
    }

    /// Runs `body` with the decoder at the value at `index` (under `key`), then moves it back.
    @inline(__always) func moved<T>(to index: Int, key: (any CodingKey)?, _ body: () throws -> T) throws -> T {
        let savedCurrent = current
        current = index
        if let key { path.append(key) }
        defer {
            current = savedCurrent
            if key != nil { path.removeLast() }
        }
        return try body()
    }

    /// How a type is decoded here, apart from its own `init(from:)`.
    enum Shape: Sendable {
        case plain
        case array(any TapeDecodableArray.Type)
        case stringKeyedDictionary(any StringKeyedDictionary.Type)
    }

    /// Shapes already worked out, for every decoder: a conformance check (`as?` on a metatype)
    /// costs the runtime a lookup several times dearer than this table's, and every document
    /// asks again about the same few types. Bounded, like the runtime's own cache is not.
    private static let shapes = Locked<[ObjectIdentifier: Shape]>([:])

    static func shape(of type: any Decodable.Type) -> Shape {
        let identifier = ObjectIdentifier(type)
        if let known = shapes.withLock({ $0[identifier] }) { return known }
        let shape: Shape
        if let dictionary = type as? any StringKeyedDictionary.Type {
            shape = .stringKeyedDictionary(dictionary)
        } else if let array = type as? any TapeDecodableArray.Type {
            shape = .array(array)
        } else {
            shape = .plain
        }
        shapes.withLock { shapes in
            if shapes.count >= 1024 { shapes.removeAll() }
            shapes[identifier] = shape
        }
        return shape
    }

    private func rememberPlain(_ identifier: ObjectIdentifier) {
        switch nextPlainSlot {
        case 0: plainTypes.0 = identifier
        case 1: plainTypes.1 = identifier
        case 2: plainTypes.2 = identifier
        default: plainTypes.3 = identifier
        }
        nextPlainSlot = (nextPlainSlot + 1) & 3
    }

    func date(at index: Int, key: (any CodingKey)?) throws -> Date {
        switch options.dateDecodingStrategy {
        case .deferredToDate:
            return try unwrap(Date.self, at: index, key: key)
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try double(at: index, key: key))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try double(at: index, key: key) / 1000)
        case .iso8601:
            let text = try string(at: index, key: key)
            if let date = DateText.iso8601(text) { return date }
            throw DecodingError.dataCorrupted(.init(
                codingPath: key.map { path + [$0] } ?? path,
                debugDescription: "Expected an ISO 8601 date (2026-11-22) or date and time (2026-11-22T10:00:00Z), found \(DateText.quoted(text))."))
        case .formatted(let format):
            let text = try string(at: index, key: key)
            if let date = DateText.formatted(text, format: format) { return date }
            throw DecodingError.dataCorrupted(.init(
                codingPath: key.map { path + [$0] } ?? path, debugDescription: "Expected a date in the format \"\(format)\", found \(DateText.quoted(text))."))
        case .parsed(let parser):
            return try moved(to: index, key: key) { try parser(self) }
        }
    }

    // MARK: Members

    /// Whether a member name (the bytes of a key token) matches `key`.
    func name(_ token: JSONTape.Token, matches key: String) -> Bool {
        if token.escaped {
            return (try? text(of: token, key: nil)).map { converted($0) == key } ?? false
        }
        let start = Int(token.start)
        let end = Int(token.end)
        let snake = options.keyDecodingStrategy == .convertFromSnakeCase
        return tape.bytes.withUnsafeBufferPointer { bytes in
            let name = UnsafeBufferPointer(rebasing: bytes[start..<end])
            // Keys are native or literal strings: their bytes are at hand without a copy of
            // the string (and the reference counting a mutable copy for `withUTF8` costs).
            if let matched = key.utf8.withContiguousStorageIfAvailable({ Self.matches(name, $0, snake: snake) }) {
                return matched
            }
            var key = key
            return key.withUTF8 { Self.matches(name, $0, snake: snake) }
        }
    }

    /// Whether member name `name` is `key`, converted from snake case first when `snake`.
    static func matches(_ name: UnsafeBufferPointer<UInt8>, _ key: UnsafeBufferPointer<UInt8>, snake: Bool) -> Bool {
        // The common case, a name the strategy leaves as it is: equal bytes decide.
        if !snake || !name.contains(UInt8(ascii: "_")) {
            guard name.count == key.count else { return false }
            guard let nameBase = name.baseAddress, let keyBase = key.baseAddress else { return true }
            return memcmp(nameBase, keyBase, name.count) == 0
        }
        return matchesSnakeCase(name, key)
    }

    /// Whether `name`, converted from snake case (`price_cents` → `priceCents`, leading and
    /// trailing underscores kept), equals `key`, without building the converted string.
    private static func matchesSnakeCase(_ name: UnsafeBufferPointer<UInt8>, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let underscore = UInt8(ascii: "_")
        // Leading underscores match themselves.
        var position = 0
        var keyIndex = 0
        let end = name.count
        while position < end, name[position] == underscore {
            guard keyIndex < key.count, key[keyIndex] == underscore else { return false }
            position += 1
            keyIndex += 1
        }
        var trailing = end
        while trailing > position, name[trailing - 1] == underscore { trailing -= 1 }
        while position < trailing {
            var byte = name[position]
            if byte == underscore {
                while position < trailing, name[position] == underscore { position += 1 }
                byte = name[position]
                if byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") { byte -= 32 }
            }
            guard keyIndex < key.count, key[keyIndex] == byte else { return false }
            position += 1
            keyIndex += 1
        }
        while position < end {
            guard keyIndex < key.count, key[keyIndex] == underscore else { return false }
            position += 1
            keyIndex += 1
        }
        return keyIndex == key.count
    }

    /// A member name as a key string, under the key strategy.
    func converted(_ name: String) -> String {
        guard options.keyDecodingStrategy == .convertFromSnakeCase, name.contains("_") else { return name }
        let core = name.drop { $0 == "_" }
        let leading = name.prefix(name.count - core.count)
        var trimmed = core
        while trimmed.last == "_" { trimmed.removeLast() }
        let trailing = core.suffix(core.count - trimmed.count)
        let parts = trimmed.split(separator: "_", omittingEmptySubsequences: true)
        guard let first = parts.first else { return name }
        // The first letter of each later word upper-cased as ASCII only, exactly as
        // `matchesSnakeCase` compares: `allKeys` lists no key a lookup would not find.
        let rest = parts.dropFirst().map { Self.asciiUppercasingFirst($0) }
        return String(leading) + first + rest.joined() + trailing
    }

    private static func asciiUppercasingFirst(_ word: Substring) -> String {
        guard let first = word.utf8.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") else { return String(word) }
        return String(UnicodeScalar(first - 32)) + word.dropFirst()
    }

    /// The value token of member `key` of the object at `object`, or `nil`.
    func member(_ key: String, in object: Int) -> Int? {
        let token = token(object)
        let count = Int(token.count)
        guard count > 0 else { return nil }
        // Members are usually asked for in document order: start after the last one found.
        var name = object + 1
        var ordinal = 0
        if hintObject == object {
            name = hintName
            ordinal = hintOrdinal
        }
        for _ in 0..<count {
            let following = Int(tape.tokens[name + 1].next)
            if self.name(tape.tokens[name], matches: key) {
                hintObject = object
                if ordinal + 1 == count {
                    hintName = object + 1
                    hintOrdinal = 0
                } else {
                    hintName = following
                    hintOrdinal = ordinal + 1
                }
                return name + 1
            }
            name = following
            ordinal += 1
            if ordinal == count {
                ordinal = 0
                name = object + 1
            }
        }
        return nil
    }
}
