// The word-at-a-time byte tests, inlined from the transport module (see `ByteWord`).
@_spi(CrossModule) import AIFTransport
package import Foundation

/// A JSON document parsed into a flat list of tokens: each value is one token, a container's
/// token is followed by its children (an object's as key, value, key, value …), and every token
/// knows where the next sibling starts, so skipping a value is one step.
///
/// Strings and numbers are kept as byte ranges and converted only when a value is asked for.
package struct JSONTape: Sendable {
    package enum Kind: UInt8 {
        case object, array, string, number, `true`, `false`, null
    }

    package struct Token {
        package var kind: Kind
        /// The string has escapes to undo.
        package var escaped: Bool
        /// Byte range of the value (for strings, inside the quotes).
        package var start: Int32
        package var end: Int32
        /// The index of the token after this value and all its children.
        package var next: Int32
        /// Members of an object, elements of an array.
        package var count: Int32
    }

    package let bytes: [UInt8]
    package let tokens: TokenList

    /// Why the document is not valid JSON, and at which byte.
    package struct SyntaxError: Error {
        package let message: String
        package let offset: Int
    }

    /// The deepest nesting accepted (objects and arrays), so that a hostile body cannot exhaust
    /// the stack of the thread decoding it: `Decodable` goes a few kilobytes deeper into the
    /// stack for every level. 128 levels fit in the smallest stack decoding runs on (the
    /// transport's thread, 8 MiB) in debug builds and under AddressSanitizer with room to
    /// spare; real APIs nest a handful of levels.
    static let maximumDepth = 128

    package init(parsing bytes: [UInt8]) throws(SyntaxError) {
        #if DEBUG
        if let watcher = Self.parseWatcher.withLock({ $0 }) { watcher(bytes) }
        #endif
        self.bytes = bytes
        let tokens = TokenList(capacity: bytes.count / 8 + 4)
        try bytes.withUnsafeBufferPointer { buffer throws(SyntaxError) in
            var parser = Parser(bytes: buffer, tokens: tokens)
            try parser.skipWhitespace()
            try parser.value(depth: 0)
            try parser.skipWhitespace()
            guard parser.position == buffer.count else {
                throw SyntaxError(message: "unexpected \(parser.describeCurrent()) after the end of the document", offset: parser.position)
            }
        }
        self.tokens = tokens
    }

    /// Reads the bytes through a buffer pointer: no bounds-check traps beyond the explicit
    /// `position < count` tests, no reference counting in the loop.
    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        let tokens: TokenList
        var position = 0

        init(bytes: UnsafeBufferPointer<UInt8>, tokens: TokenList) {
            self.bytes = bytes
            self.tokens = tokens
        }

        func describeCurrent() -> String {
            guard position < bytes.count else { return "end of data" }
            let byte = bytes[position]
            return (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : String(format: "byte 0x%02X", byte)
        }

        func fail(_ expected: String) -> SyntaxError {
            SyntaxError(message: "expected \(expected) but found \(describeCurrent())", offset: position)
        }

        mutating func skipWhitespace() throws(SyntaxError) {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x0A, 0x0D, 0x09: position += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) {
            guard position < bytes.count else { throw fail("a value") }
            switch bytes[position] {
            case UInt8(ascii: "{"): try object(depth: depth + 1)
            case UInt8(ascii: "["): try array(depth: depth + 1)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true", .true)
            case UInt8(ascii: "f"): try literal("false", .false)
            case UInt8(ascii: "n"): try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default: throw fail("a value")
            }
        }

        mutating func literal(_ text: StaticString, _ kind: Kind) throws(SyntaxError) {
            let length = text.utf8CodeUnitCount
            guard position + length <= bytes.count else { throw fail("\(text)") }
            let literal = UnsafeBufferPointer(start: text.utf8Start, count: length)
            for index in 0..<length where bytes[position + index] != literal[index] {
                position += index
                throw fail("\(text)")
            }
            let index = Int32(tokens.count)
            tokens.append(Token(kind: kind, escaped: false, start: Int32(position), end: Int32(position + length), next: index + 1, count: 0))
            position += length
        }

        mutating func string() throws(SyntaxError) {
            position += 1
            let start = position
            var escaped = false
            // Skip eight bytes at a time while none of them is a quote, a backslash or a
            // control character (the SWAR "has zero byte" test on each of the three).
            if let base = bytes.baseAddress {
                while position + 8 <= bytes.count {
                    let word = ByteWord.load(base, at: position)
                    if ByteWord.contains(word, UInt8(ascii: "\"")) || ByteWord.contains(word, UInt8(ascii: "\\"))
                        || ByteWord.containsByte(word, below: 0x20)
                    {
                        break
                    }
                    position += 8
                }
            }
            while true {
                guard position < bytes.count else { throw SyntaxError(message: "unterminated string", offset: start - 1) }
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") { break }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    position += 2
                    continue
                }
                guard byte >= 0x20 else { throw SyntaxError(message: "unescaped control character in a string", offset: position) }
                position += 1
            }
            let index = Int32(tokens.count)
            tokens.append(Token(kind: .string, escaped: escaped, start: Int32(start), end: Int32(position), next: index + 1, count: 0))
            position += 1
        }

        mutating func number() throws(SyntaxError) {
            let start = position
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard position < bytes.count, isDigit(bytes[position]) else { throw fail("a digit") }
            if bytes[position] == UInt8(ascii: "0") {
                position += 1
            } else {
                while position < bytes.count, isDigit(bytes[position]) { position += 1 }
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard position < bytes.count, isDigit(bytes[position]) else { throw fail("a digit after the decimal point") }
                while position < bytes.count, isDigit(bytes[position]) { position += 1 }
            }
            if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
                guard position < bytes.count, isDigit(bytes[position]) else { throw fail("a digit in the exponent") }
                while position < bytes.count, isDigit(bytes[position]) { position += 1 }
            }
            let index = Int32(tokens.count)
            tokens.append(Token(kind: .number, escaped: false, start: Int32(start), end: Int32(position), next: index + 1, count: 0))
        }

        func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

        /// A member name must be text: valid escapes and valid UTF-8. (String values are
        /// checked when they are read; a name is read by every lookup and by `allKeys`, which
        /// cannot report a bad one.)
        func checkMemberName(_ token: Token, at start: Int) throws(SyntaxError) {
            let name = UnsafeBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.end)])
            if !token.escaped {
                if JSONTape.isASCII(name) || String(validating: name, as: UTF8.self) != nil { return }
            } else if let unescaped = JSONTape.unescape(ArraySlice(name)), String(validating: unescaped, as: UTF8.self) != nil {
                return
            }
            throw SyntaxError(message: "a member name with an invalid escape or invalid UTF-8", offset: start)
        }

        mutating func object(depth: Int) throws(SyntaxError) {
            guard depth <= JSONTape.maximumDepth else { throw SyntaxError(message: "nested deeper than \(JSONTape.maximumDepth) levels", offset: position) }
            let index = tokens.count
            tokens.append(Token(kind: .object, escaped: false, start: Int32(position), end: 0, next: 0, count: 0))
            position += 1
            try skipWhitespace()
            var count: Int32 = 0
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
            } else {
                while true {
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("a member name in quotes") }
                    let nameStart = position
                    try string()
                    try checkMemberName(tokens[tokens.count - 1], at: nameStart)
                    try skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw fail("':'") }
                    position += 1
                    try skipWhitespace()
                    try value(depth: depth)
                    count += 1
                    try skipWhitespace()
                    guard position < bytes.count else { throw fail("',' or '}'") }
                    if bytes[position] == UInt8(ascii: ",") {
                        position += 1
                        try skipWhitespace()
                        continue
                    }
                    guard bytes[position] == UInt8(ascii: "}") else { throw fail("',' or '}'") }
                    position += 1
                    break
                }
            }
            tokens.close(index, end: Int32(position), count: count)
        }

        mutating func array(depth: Int) throws(SyntaxError) {
            guard depth <= JSONTape.maximumDepth else { throw SyntaxError(message: "nested deeper than \(JSONTape.maximumDepth) levels", offset: position) }
            let index = tokens.count
            tokens.append(Token(kind: .array, escaped: false, start: Int32(position), end: 0, next: 0, count: 0))
            position += 1
            try skipWhitespace()
            var count: Int32 = 0
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
            } else {
                while true {
                    try value(depth: depth)
                    count += 1
                    try skipWhitespace()
                    guard position < bytes.count else { throw fail("',' or ']'") }
                    if bytes[position] == UInt8(ascii: ",") {
                        position += 1
                        try skipWhitespace()
                        continue
                    }
                    guard bytes[position] == UInt8(ascii: "]") else { throw fail("',' or ']'") }
                    position += 1
                    break
                }
            }
            tokens.close(index, end: Int32(position), count: count)
        }
    }
}

/// The tape's tokens, in memory of their own: the parser appends to it without an array's
/// uniqueness and capacity checks on every token, and the decoder reads tokens by index — always
/// an index the tape itself produced, still checked.
///
/// Unchecked `Sendable`: it is written only while its tape is parsed, before the tape exists for
/// anyone else; after that it is only read (a response's tape is read by the service's rule on
/// one thread and by the decoder on another, one after the other).
package final class TokenList: @unchecked Sendable {
    private var base: UnsafeMutablePointer<JSONTape.Token>
    private(set) var count = 0
    private var capacity: Int

    // The tokens live in a block from `malloc`, grown with `realloc` (they are plain values,
    // moved as bytes): `UnsafeMutablePointer.allocate` asks the runtime for "default"
    // alignment, which on Linux it serves with `posix_memalign`, four times `malloc`'s cost.
    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 4)
        base = Self.resized(nil, to: self.capacity)
    }

    deinit {
        free(base)
    }

    private static func resized(_ block: UnsafeMutablePointer<JSONTape.Token>?, to capacity: Int) -> UnsafeMutablePointer<JSONTape.Token> {
        guard let grown = realloc(block, capacity * MemoryLayout<JSONTape.Token>.stride) else { fatalError("out of memory for a JSON tape of \(capacity) tokens") }
        return grown.bindMemory(to: JSONTape.Token.self, capacity: capacity)
    }

    @inline(__always) package subscript(index: Int) -> JSONTape.Token {
        precondition(index >= 0 && index < count, "token index out of range")
        return base[index]
    }

    /// Appends a token (tokens are plain values: nothing to retain or release).
    @inline(__always) func append(_ token: JSONTape.Token) {
        if count == capacity { grow() }
        (base + count).initialize(to: token)
        count += 1
    }

    /// Completes the container token at `index` once its children are in.
    func close(_ index: Int, end: Int32, count childCount: Int32) {
        base[index].end = end
        base[index].next = Int32(count)
        base[index].count = childCount
    }

    private func grow() {
        capacity *= 2
        base = Self.resized(base, to: capacity)
    }
}

// MARK: Reading values

extension JSONTape {
    /// Undoes JSON escapes; `nil` for a malformed one.
    package static func unescape(_ input: ArraySlice<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = input.startIndex
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= input.endIndex else { return nil }
            var value: UInt32 = 0
            for byte in input[at..<at + 4] {
                value <<= 4
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value |= UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value |= UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): value |= UInt32(byte - UInt8(ascii: "A") + 10)
                default: return nil
                }
            }
            return value
        }
        while index < input.endIndex {
            let byte = input[index]
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                index += 1
                continue
            }
            guard index + 1 < input.endIndex else { return nil }
            let escape = input[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(index) else { return nil }
                index += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    guard index + 6 <= input.endIndex, input[index] == UInt8(ascii: "\\"), input[index + 1] == UInt8(ascii: "u"),
                        let low = hex4(index + 2), (0xDC00..<0xE000).contains(low)
                    else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                output.append(contentsOf: UTF8.encode(unicode)!)
            default:
                return nil
            }
        }
        return output
    }

    /// Parses a response body, for decoding: invalid JSON is a `DecodingError` naming the byte.
    package init(decoding body: Data) throws(DecodingError) {
        do {
            try self.init(parsing: [UInt8](body))
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "The given data was not valid JSON: \(error.message) at byte \(error.offset)."))
        }
    }

    /// The value token of member `name` of the object token at `object`, or `nil` when the object
    /// has no such member.
    package func member(_ name: String, of object: Int) -> Int? {
        var key = object + 1
        let wanted = Array(name.utf8)
        for _ in 0..<Int(tokens[object].count) {
            let token = tokens[key]
            let name = bytes[Int(token.start)..<Int(token.end)]
            let matches = token.escaped ? JSONTape.unescape(name).map { $0 == wanted } ?? false : name.elementsEqual(wanted)
            if matches { return key + 1 }
            key = Int(tokens[key + 1].next)
        }
        return nil
    }

    /// The value at `index` as text, the way a code or a message is compared and shown: a string
    /// unescaped; an integral number without a fraction (`4001.0` is `4001`); `true` and `false`
    /// as `1` and `0`, as Foundation's numbers print them; an object or array as its JSON; `nil`
    /// for `null`.
    package func text(at index: Int) -> String? {
        let token = tokens[index]
        let raw = bytes[Int(token.start)..<Int(token.end)]
        switch token.kind {
        case .null: return nil
        case .true: return "1"
        case .false: return "0"
        case .string: return String(decoding: token.escaped ? JSONTape.unescape(raw) ?? Array(raw) : Array(raw), as: UTF8.self)
        case .number:
            let literal = String(decoding: raw, as: UTF8.self)
            if let value = Double(literal), value.rounded() == value, abs(value) < 1e15, !raw.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") || $0 == UInt8(ascii: "-") }) {
                return String(Int(value))
            }
            return literal
        case .object, .array: return String(decoding: raw, as: UTF8.self)
        }
    }
}

#if DEBUG
extension JSONTape {
    /// Told of every document parsed, in debug builds: a test counts the parses of a body it
    /// knows (a response's body is parsed once, whoever reads it).
    static let parseWatcher = Locked<(@Sendable ([UInt8]) -> Void)?>(nil)
}
#endif

/// A response body's parsed JSON, behind one reference (a response is copied through several
/// async frames).
package final class ParsedJSON: Sendable {
    package let tape: JSONTape
    package init(_ tape: JSONTape) { self.tape = tape }
}

extension HTTPResponse {
    /// The body's JSON when a load parsed it already (for the service's application-error
    /// rule), handed with the response to the decoder: the response's attachment.
    package var json: ParsedJSON? {
        get { attachment as? ParsedJSON }
        set { attachment = newValue }
    }
}

extension JSONTape {
    /// Whether every byte is below 0x80, eight at a time.
    package static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var index = 0
        var seen: UInt64 = 0
        while index + 8 <= bytes.count {
            seen |= ByteWord.load(base, at: index)
            index += 8
        }
        while index < bytes.count {
            seen |= UInt64(bytes[index])
            index += 1
        }
        return !ByteWord.containsNonASCII(seen)
    }
}
