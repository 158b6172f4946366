import Foundation

/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// A name may appear more than once (`Set-Cookie`, `Vary` …); ``values(for:)`` returns every
/// value in order and the subscript returns the first. Headers that arrive in a response are
/// kept as the raw bytes of the header block and parsed only when they are read, so a response
/// whose headers nobody reads costs nothing to describe.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The field name as sent or received (its case is kept, but never matters for lookup).
        public var name: String
        /// The field value, with surrounding whitespace removed.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private enum Storage: Sendable {
        case fields([Field])
        /// `Name: value\r\n` lines exactly as received, without the status line.
        case raw([UInt8])
    }

    private var storage: Storage

    /// Creates an empty header list.
    public init() {
        storage = .fields([])
    }

    /// Creates a header list from fields, in order.
    public init(_ fields: [Field]) {
        storage = .fields(fields)
    }

    /// Creates a header list from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        storage = .fields(pairs.map { Field(name: $0.0, value: $0.1) })
    }

    /// Creates a header list from a dictionary literal: `["Accept": "application/json"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Wraps the raw header lines of a response; parsing is deferred to the first read.
    init(rawBlock: [UInt8]) {
        storage = .raw(rawBlock)
    }

    /// The fields in order.
    public var fields: [Field] {
        switch storage {
        case .fields(let fields): return fields
        case .raw(let bytes):
            var fields: [Field] = []
            bytes.withUnsafeBufferPointer { block in
                Self.forEachRawField(in: block) { name, value in
                    fields.append(Field(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
                    return true
                }
            }
            return fields
        }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool {
        switch storage {
        case .fields(let fields): fields.isEmpty
        case .raw(let bytes): !bytes.contains(UInt8(ascii: ":"))
        }
    }

    /// The first value of the field `name` (compared without regard to case), or `nil`.
    ///
    /// Setting a value replaces every field of that name with one (``set(name:value:)``);
    /// setting `nil` removes them (``remove(name:)``):
    ///
    /// ```swift
    /// headers["Accept"] = "application/json"
    /// headers["X-Debug"] = nil
    /// ```
    public subscript(name: String) -> String? {
        get { first(name) }
        set {
            if let newValue { set(name: name, value: newValue) } else { remove(name: name) }
        }
    }

    /// Every value of the field `name` (compared without regard to case), in order.
    ///
    /// - Parameter name: The field name, in any case.
    /// - Returns: The values; empty when the field is absent.
    public func values(for name: String) -> [String] {
        var result: [String] = []
        forEachValue(of: name) { value in
            result.append(value)
            return true
        }
        return result
    }

    /// Whether a field called `name` (compared without regard to case) is present.
    public func contains(_ name: String) -> Bool {
        first(name) != nil
    }

    /// Appends a field, keeping any fields of the same name.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public mutating func add(name: String, value: String) {
        var fields = self.fields
        fields.append(Field(name: name, value: value))
        storage = .fields(fields)
    }

    /// Replaces every field called `name` with one field holding `value` (at the position of
    /// the first one, or at the end).
    ///
    /// - Parameters:
    ///   - name: The field name, in any case.
    ///   - value: The new value.
    public mutating func set(name: String, value: String) {
        var fields = self.fields
        let field = Field(name: name, value: value)
        if let index = fields.firstIndex(where: { Self.namesMatch($0.name, name) }) {
            let rest = fields[(index + 1)...].filter { !Self.namesMatch($0.name, name) }
            fields = Array(fields[..<index]) + [field] + rest
        } else {
            fields.append(field)
        }
        storage = .fields(fields)
    }

    /// Removes every field called `name` (compared without regard to case).
    public mutating func remove(name: String) {
        var fields = self.fields
        fields.removeAll { Self.namesMatch($0.name, name) }
        storage = .fields(fields)
    }

    /// Merges `other` over these headers: each name in `other` replaces every field of that name
    /// here; other fields are kept.
    ///
    /// - Parameter other: The headers that take precedence.
    /// - Returns: The merged list.
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        let overriding = other.fields
        guard !overriding.isEmpty else { return self }
        var fields = self.fields.filter { field in !overriding.contains { Self.namesMatch($0.name, field.name) } }
        fields.append(contentsOf: overriding)
        return HTTPHeaders(fields)
    }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// The fields as `Name: value` lines.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    // MARK: - Lookup without materialising

    private func first(_ name: String) -> String? {
        var found: String?
        forEachValue(of: name) { value in
            found = value
            return false
        }
        return found
    }

    /// Calls `body` with each value of `name` until it returns `false`.
    private func forEachValue(of name: String, _ body: (String) -> Bool) {
        switch storage {
        case .fields(let fields):
            for field in fields where Self.namesMatch(field.name, name) {
                if !body(field.value) { return }
            }
        case .raw(let bytes):
            var name = name
            name.withUTF8 { wanted in
                bytes.withUnsafeBufferPointer { block in
                    Self.forEachRawValue(of: wanted, in: block) { body(String(decoding: $0, as: UTF8.self)) }
                }
            }
        }
    }

    /// Walks the lines of a raw block whose name is `wanted` (ignoring case), handing each
    /// value, trimmed, to `body` until it returns `false`. A line is looked at closely only when
    /// it begins with the name: the others are passed over a line break at a time.
    private static func forEachRawValue(
        of wanted: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Bool
    ) {
        guard let base = bytes.baseAddress, let wantedBase = wanted.baseAddress, !wanted.isEmpty else { return }
        let end = bytes.count
        let first = asciiLowercased(wantedBase[0])
        var lineStart = 0
        while lineStart < end {
            let lineEnd = memchr(base + lineStart, 0x0A, end - lineStart).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? end
            defer { lineStart = lineEnd + 1 }
            // `Name:` (spaces or tabs around the name, as ``fields`` trims them), then the value.
            var nameStart = lineStart
            while nameStart < lineEnd, base[nameStart] == 0x20 || base[nameStart] == 0x09 { nameStart += 1 }
            guard lineEnd - nameStart > wanted.count, asciiLowercased(base[nameStart]) == first else { continue }
            var colon = nameStart + wanted.count
            guard bytesMatchIgnoringCase(UnsafeBufferPointer(start: base + nameStart, count: wanted.count), wanted) else { continue }
            while colon < lineEnd, base[colon] == 0x20 || base[colon] == 0x09 { colon += 1 }
            guard colon < lineEnd, base[colon] == UInt8(ascii: ":") else { continue }
            var valueEnd = lineEnd
            if valueEnd > colon + 1, base[valueEnd - 1] == UInt8(ascii: "\r") { valueEnd -= 1 }
            let value = trimmed(bytes, (colon + 1)..<valueEnd)
            if !body(UnsafeBufferPointer(rebasing: bytes[value])) { return }
        }
    }

    /// Walks `Name: value` lines of a raw block, trimming optional whitespace, until `body`
    /// returns `false`. Lines without a colon (a stray status line, the blank end line) are
    /// skipped. Works on the bytes in place: a lookup neither copies nor allocates.
    private static func forEachRawField(
        in bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool
    ) {
        var lineStart = 0
        let end = bytes.count
        while lineStart < end {
            var colon = -1
            var lineEnd = lineStart
            while lineEnd < end, bytes[lineEnd] != UInt8(ascii: "\n") {
                if colon < 0, bytes[lineEnd] == UInt8(ascii: ":") { colon = lineEnd }
                lineEnd += 1
            }
            let next = lineEnd + 1
            if lineEnd > lineStart, bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            defer { lineStart = next }
            guard colon >= 0, colon < lineEnd else { continue }
            let name = trimmed(bytes, lineStart..<colon)
            guard !name.isEmpty else { continue }
            let value = trimmed(bytes, (colon + 1)..<lineEnd)
            if !body(UnsafeBufferPointer(rebasing: bytes[name]), UnsafeBufferPointer(rebasing: bytes[value])) { return }
        }
    }

    /// `range` without leading and trailing spaces and tabs.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return lower..<upper
    }

    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in rhs.withUTF8 { right in bytesMatchIgnoringCase(left, right) } }
    }

    private static func bytesMatchIgnoringCase<L: Collection, R: Collection>(_ lhs: L, _ rhs: R) -> Bool
    where L.Element == UInt8, R.Element == UInt8 {
        guard lhs.count == rhs.count else { return false }
        for (left, right) in zip(lhs, rhs) where asciiLowercased(left) != asciiLowercased(right) {
            return false
        }
        return true
    }

    @inline(__always)
    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}

extension HTTPHeaders: Equatable {
    /// Two header lists are equal when they hold the same fields in the same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields == rhs.fields
    }
}
