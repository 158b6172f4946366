public import Foundation

/// Decodes response bodies into `Decodable` values: ``FastJSONDecoder`` by default, or
/// Foundation's `JSONDecoder` (which conforms), or a decoder of your own for other formats.
public protocol ContentDecoder: Sendable {
    /// Decodes a value of `type` from `data`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - data: The body.
    /// - Returns: The value.
    /// - Throws: `DecodingError` (or the decoder's own errors) saying what is wrong and where.
    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value
}

extension JSONDecoder: ContentDecoder {}
