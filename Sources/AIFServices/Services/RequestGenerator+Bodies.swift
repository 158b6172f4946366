package import Foundation

extension RequestGenerator {
    /// A request body made from an `Encodable` value: JSON through the service's
    /// ``Service/encoder``, or a form of the value's members (encoded by the same encoder
    /// first, so that key and date strategies apply alike), arrays written as `arrays` or the
    /// service's ``Service/arrayEncoding`` says.
    ///
    /// Made once per load: every attempt sends, and a signer that hashes the body hashes,
    /// the same bytes.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - encoding: JSON or a form; the service's ``Service/bodyEncoding`` when `nil`.
    ///   - arrays: How a form writes arrays; the service's when `nil`.
    ///   - resolved: The service the body is for.
    ///   - path: The endpoint's path, for errors.
    /// - Returns: The bytes and their content type.
    /// - Throws: ``ServiceError/unencodableBody(service:path:type:reason:)`` naming the value's
    ///   type and, for an `EncodingError`, where in it encoding failed.
    package func body(
        encoding value: some Encodable, as encoding: Parameters.BodyEncoding? = nil, arrays: Parameters.ArrayEncoding? = nil,
        for resolved: ServiceRegistry.ResolvedService, path: String
    ) throws(ServiceError) -> (data: Data, contentType: String) {
        let service = resolved.service
        let typeName = String(describing: type(of: value))
        func refusal(_ reason: String) -> ServiceError {
            .unencodableBody(service: service.name, path: path, type: typeName, reason: reason)
        }
        let json: Data
        do {
            json = try (service.encoder ?? .mirroring(service.decoder)).encode(value)
        } catch let error as EncodingError {
            throw refusal(Self.describe(error))
        } catch {
            throw refusal("\(error)")
        }
        switch encoding ?? service.bodyEncoding {
        case .json:
            return (json, "application/json")
        case .form:
            guard case .object(let members)? = try? FastJSONDecoder().decode(JSONValue.self, from: json) else {
                throw refusal("a form holds named members, and the value encodes as \(Self.shape(of: json))")
            }
            let form = Self.flatten(Parameters(members), arrays: arrays ?? service.arrayEncoding)
                .map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }.joined(separator: "&")
            return (Data(form.utf8), "application/x-www-form-urlencoded")
        }
    }

    /// An encoding error as a sentence: what went wrong, and where in the value.
    private static func describe(_ error: EncodingError) -> String {
        guard case .invalidValue(_, let context) = error else { return "\(error)" }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? context.debugDescription : "\(context.debugDescription) (at \(path.hasPrefix(".") ? String(path.dropFirst()) : path))"
    }

    /// What a JSON document is, in a word: for an error about its top level.
    private static func shape(of json: Data) -> String {
        switch json.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
        case UInt8(ascii: "["): "an array"
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "a flag"
        case UInt8(ascii: "n"): "null"
        default: "a number"
        }
    }
}
