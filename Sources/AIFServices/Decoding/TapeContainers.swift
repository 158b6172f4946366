import Foundation

/// A keyed container over one object of the tape.
///
/// A container the decoder makes for the value it is at keeps no copy of its coding path, only
/// the path's length: its path is the decoder's first `depth` keys for as long as the value
/// decodes (the standard library's box copies the container for every value read, and each
/// stored reference is retained and released with it). A nested container, whose path the
/// decoder never held, keeps its own.
struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: TapeDecoder
    let object: Int
    let depth: Int
    let ownPath: [any CodingKey]?

    /// A container for the value the decoder is at, under the decoder's path.
    init(decoder: TapeDecoder, object: Int) {
        self.decoder = decoder
        self.object = object
        self.depth = decoder.path.count
        self.ownPath = nil
    }

    /// A container for a nested value, under `codingPath`.
    init(decoder: TapeDecoder, object: Int, codingPath: [any CodingKey]) {
        self.decoder = decoder
        self.object = object
        self.depth = codingPath.count
        self.ownPath = codingPath
    }

    var codingPath: [any CodingKey] {
        ownPath ?? Array(decoder.path.prefix(depth))
    }

    /// Puts the decoder's path at this container's before a read (see
    /// ``TapeDecoder/align(to:)``).
    @inline(__always) private func align() {
        if decoder.path.count != depth { decoder.realign(depth: depth, ownPath: ownPath) }
    }

    var allKeys: [Key] {
        var keys: [Key] = []
        var name = object + 1
        for _ in 0..<Int(decoder.token(object).count) {
            if let text = try? decoder.text(of: decoder.token(name), key: nil), let key = Key(stringValue: decoder.converted(text)) {
                keys.append(key)
            }
            name = Int(decoder.token(name + 1).next)
        }
        return keys
    }

    func contains(_ key: Key) -> Bool {
        decoder.member(key.stringValue, in: object) != nil
    }

    private func value(_ key: Key) throws -> Int {
        guard let index = decoder.member(key.stringValue, in: object) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return index
    }

    // Every read first puts the decoder's path at this container's (`align()`), written out
    // in each method rather than through a closure, which the optimiser left as a call of its
    // own per value.

    /// The integer types' reads, specialised for each (no closure, so nothing left unspecialised).
    @inline(__always) private func integer<T: FixedWidthInteger>(_ type: T.Type, forKey key: Key) throws -> T {
        align()
        return try decoder.integer(type, at: value(key), key: key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { decoder.isNull(try value(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        align()
        return try decoder.bool(at: value(key), key: key)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        align()
        return try decoder.string(at: value(key), key: key)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        align()
        return try decoder.double(at: value(key), key: key)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        align()
        return try decoder.float(at: value(key), key: key)
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, forKey: key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, forKey: key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, forKey: key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        align()
        return try decoder.unwrap(type, at: value(key), key: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let index = decoder.member(key.stringValue, in: object), !decoder.isNull(index) else { return nil }
        align()
        return try decoder.string(at: index, key: key)
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let index = decoder.member(key.stringValue, in: object), !decoder.isNull(index) else { return nil }
        align()
        return try decoder.integer(type, at: index, key: key)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let index = decoder.member(key.stringValue, in: object), !decoder.isNull(index) else { return nil }
        align()
        return try decoder.bool(at: index, key: key)
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let index = decoder.member(key.stringValue, in: object), !decoder.isNull(index) else { return nil }
        align()
        return try decoder.double(at: index, key: key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = decoder.member(key.stringValue, in: object), !decoder.isNull(index) else { return nil }
        align()
        return try decoder.unwrap(type, at: index, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let index = try value(key)
        align()
        try decoder.expect(.object, at: index, "a dictionary", key: key)
        return KeyedDecodingContainer(KeyedContainer<NestedKey>(decoder: decoder, object: index, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let index = try value(key)
        align()
        try decoder.expect(.array, at: index, "an array", key: key)
        return UnkeyedContainer(decoder: decoder, array: index, codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder {
        guard let index = decoder.member("super", in: object) else {
            throw DecodingError.keyNotFound(IndexKey(0), .init(codingPath: codingPath, debugDescription: "No value associated with key super."))
        }
        return decoder.detached(at: index, path: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoder.detached(at: try value(key), path: codingPath + [key])
    }
}

/// An unkeyed container over one array of the tape.
struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: TapeDecoder
    let codingPath: [any CodingKey]
    let count: Int?
    private(set) var currentIndex = 0
    private var position: Int

    init(decoder: TapeDecoder, array: Int, codingPath: [any CodingKey]) {
        self.decoder = decoder
        self.codingPath = codingPath
        self.count = Int(decoder.token(array).count)
        self.position = array + 1
    }

    var isAtEnd: Bool { currentIndex >= count! }

    private mutating func next<T>(_ type: T.Type, _ read: (Int, IndexKey) throws -> T) throws -> T {
        let key = IndexKey(currentIndex)
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key], debugDescription: "Unkeyed container is at end."))
        }
        decoder.align(to: codingPath)
        let value = try read(position, key)
        position = Int(decoder.token(position).next)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any?.self, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        guard decoder.isNull(position) else { return false }
        position = Int(decoder.token(position).next)
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { [decoder] in try decoder.bool(at: $0, key: $1) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { [decoder] in try decoder.string(at: $0, key: $1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { [decoder] in try decoder.double(at: $0, key: $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { [decoder] in try decoder.float(at: $0, key: $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { [decoder] in try decoder.integer(type, at: $0, key: $1) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // `next` written out: the element path of every array goes through here.
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        decoder.align(to: codingPath)
        let value = try decoder.unwrap(type, at: position, key: IndexKey(currentIndex))
        position = Int(decoder.token(position).next)
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let path = codingPath
        return try next(KeyedDecodingContainer<NestedKey>.self) { [decoder] index, key in
            try decoder.expect(.object, at: index, "a dictionary", key: key)
            return KeyedDecodingContainer(KeyedContainer<NestedKey>(decoder: decoder, object: index, codingPath: path + [key]))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = codingPath
        return try next((any UnkeyedDecodingContainer).self) { [decoder] index, key in
            try decoder.expect(.array, at: index, "an array", key: key)
            return UnkeyedContainer(decoder: decoder, array: index, codingPath: path + [key])
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        let path = codingPath
        return try next((any Decoder).self) { [decoder] index, key in decoder.detached(at: index, path: path + [key]) }
    }
}

/// A single-value container over one value of the tape.
struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: TapeDecoder
    let index: Int
    let codingPath: [any CodingKey]

    /// The integer types' reads, specialised for each.
    @inline(__always) private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        decoder.align(to: codingPath)
        return try decoder.integer(type, at: index, key: nil)
    }

    func decodeNil() -> Bool { decoder.isNull(index) }
    func decode(_ type: Bool.Type) throws -> Bool {
        decoder.align(to: codingPath)
        return try decoder.bool(at: index, key: nil)
    }
    func decode(_ type: String.Type) throws -> String {
        decoder.align(to: codingPath)
        return try decoder.string(at: index, key: nil)
    }
    func decode(_ type: Double.Type) throws -> Double {
        decoder.align(to: codingPath)
        return try decoder.double(at: index, key: nil)
    }
    func decode(_ type: Float.Type) throws -> Float {
        decoder.align(to: codingPath)
        return try decoder.float(at: index, key: nil)
    }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        decoder.align(to: codingPath)
        return try decoder.unwrap(type, at: index)
    }
}
