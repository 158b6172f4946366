import Foundation
@_spi(CrossModule) import AIFTransport

/// A digest of a `Decodable` type's shape, part of every cache key: a stored body is only read
/// back as the type that stored it had it, so that a changed type never reads an old body as
/// new.
///
/// The shape is traced by decoding the type once from a decoder that answers every question:
/// each key asked for with the type wanted, each nested container, one element of each array,
/// placeholder values (`0`, `""`, `false`, a fixed `URL`, `UUID` or `Date`). Adding, removing or renaming a field, or changing
/// its type, changes the trace. A type whose decoding stops on a placeholder (an enum with no
/// case for `""`) is traced up to that point; its name and size are part of the digest too.
/// What no trace can see (the meaning of a field) is what ``ResponseCache/Policy/version`` is for.
enum SchemaFingerprint {
    private static let known = Locked<[ObjectIdentifier: String]>([:])

    /// The fingerprint of `type`, computed once per process.
    static func of<Value: Decodable>(_ type: Value.Type) -> String {
        let id = ObjectIdentifier(type)
        if let known = known.withLock({ $0[id] }) { return known }
        let trace = ShapeTrace()
        let decoder = ShapeDecoder(trace: trace, depth: 0)
        do {
            _ = try Value(from: decoder)
        } catch {
            trace.note("stopped")
        }
        let material = "\(String(reflecting: type))|\(MemoryLayout<Value>.size)|" + trace.events.joined(separator: ";")
        let fingerprint = Digest.hex(Digest.hash(Data(material.utf8)).prefix(8))
        known.withLock { $0[id] = fingerprint }
        return fingerprint
    }
}

/// What the tracing decoder was asked, in order.
private final class ShapeTrace {
    var events: [String] = []
    func note(_ event: String) { events.append(event) }
}

/// The error that ends a trace that went too deep (a recursive type).
private struct TooDeep: Error {}

/// A decoder that answers every question with a placeholder and records it.
private struct ShapeDecoder: Decoder {
    let trace: ShapeTrace
    let depth: Int
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try enter("{")
        return KeyedDecodingContainer(ShapeKeyedContainer<Key>(trace: trace, depth: depth + 1))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try enter("[")
        return ShapeUnkeyedContainer(trace: trace, depth: depth + 1)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ShapeSingleValue(trace: trace, depth: depth)
    }

    private func enter(_ event: String) throws {
        trace.note(event)
        guard depth < 12 else { throw TooDeep() }
    }
}

/// Placeholder values of the primitive types a decoder provides.
private func placeholder<Value: Decodable>(_ type: Value.Type, trace: ShapeTrace, depth: Int) throws -> Value {
    trace.note(String(describing: type))
    switch type {
    case is Bool.Type: return false as! Value
    case is String.Type: return "" as! Value
    case is Double.Type: return 0.0 as! Value
    case is Float.Type: return Float(0) as! Value
    case is Int.Type: return 0 as! Value
    case is Int8.Type: return Int8(0) as! Value
    case is Int16.Type: return Int16(0) as! Value
    case is Int32.Type: return Int32(0) as! Value
    case is Int64.Type: return Int64(0) as! Value
    case is UInt.Type: return UInt(0) as! Value
    case is UInt8.Type: return UInt8(0) as! Value
    case is UInt16.Type: return UInt16(0) as! Value
    case is UInt32.Type: return UInt32(0) as! Value
    case is UInt64.Type: return UInt64(0) as! Value
    // Types whose own decoding would refuse every placeholder and end the trace early.
    case is URL.Type: return URL(string: "x") as! Value
    case is UUID.Type: return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) as! Value
    case is Date.Type: return Date(timeIntervalSince1970: 0) as! Value
    case is Data.Type: return Data() as! Value
    case is Decimal.Type: return Decimal(0) as! Value
    default: return try Value(from: ShapeDecoder(trace: trace, depth: depth))
    }
}

private struct ShapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let trace: ShapeTrace
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool {
        trace.note("\(key.stringValue)?")
        return false
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        trace.note("\(key.stringValue):")
        return try placeholder(type, trace: trace, depth: depth)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        trace.note("\(key.stringValue):")
        return try ShapeDecoder(trace: trace, depth: depth).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        trace.note("\(key.stringValue):")
        return try ShapeDecoder(trace: trace, depth: depth).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder { ShapeDecoder(trace: trace, depth: depth) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ShapeDecoder(trace: trace, depth: depth) }
}

private struct ShapeUnkeyedContainer: UnkeyedDecodingContainer {
    let trace: ShapeTrace
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 1 }
    var currentIndex = 0
    var isAtEnd: Bool { currentIndex >= 1 }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        currentIndex += 1
        return try placeholder(type, trace: trace, depth: depth)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        currentIndex += 1
        return try ShapeDecoder(trace: trace, depth: depth).container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        currentIndex += 1
        return try ShapeDecoder(trace: trace, depth: depth).unkeyedContainer()
    }
    mutating func superDecoder() throws -> any Decoder {
        currentIndex += 1
        return ShapeDecoder(trace: trace, depth: depth)
    }
}

private struct ShapeSingleValue: SingleValueDecodingContainer {
    let trace: ShapeTrace
    let depth: Int
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try placeholder(type, trace: trace, depth: depth)
    }
}
