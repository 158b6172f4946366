public import Foundation

/// Encodes request bodies from `Encodable` values: Foundation's `JSONEncoder` conforms, and a
/// service without one of its own encodes with ``ContentEncoder/mirroring(_:)`` of its decoder.
public protocol ContentEncoder: Sendable {
    /// Encodes `value` as the body's bytes.
    ///
    /// - Parameter value: The value.
    /// - Returns: The bytes.
    /// - Throws: `EncodingError` (or the encoder's own errors) saying what is wrong and where.
    func encode<Value: Encodable>(_ value: Value) throws -> Data
}

extension JSONEncoder: ContentEncoder {}

extension ContentEncoder where Self == JSONEncoder {
    /// A JSON encoder that writes what `decoder` reads: `snake_case` member names when it reads
    /// them, dates in its form (a function's dates as `Date` encodes itself), keys sorted and
    /// slashes unescaped, so that equal values give equal bytes — and equal signatures.
    ///
    /// - Parameter decoder: The service's decoder; `nil`, or one that is not a
    ///   ``FastJSONDecoder``, for the default forms.
    /// - Returns: The encoder.
    public static func mirroring(_ decoder: (any ContentDecoder)?) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let decoder = decoder as? FastJSONDecoder else { return encoder }
        if decoder.keyDecodingStrategy == .convertFromSnakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
        switch decoder.dateDecodingStrategy {
        case .deferredToDate, .parsed: encoder.dateEncodingStrategy = .deferredToDate
        case .secondsSince1970: encoder.dateEncodingStrategy = .secondsSince1970
        case .millisecondsSince1970: encoder.dateEncodingStrategy = .millisecondsSince1970
        case .iso8601: encoder.dateEncodingStrategy = .iso8601
        case .formatted(let format):
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = format
            encoder.dateEncodingStrategy = .formatted(formatter)
        }
        return encoder
    }
}
