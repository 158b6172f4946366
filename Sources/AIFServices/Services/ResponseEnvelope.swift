public import Foundation

/// Where a service's JSON bodies keep their content, when every body is wrapped —
/// `{"code": 0, "message": "ok", "data": {…}}` — so that managers decode the content itself
/// (`Goods`, a page of goods) rather than an envelope type around it.
///
/// The service's ``Service/veto(_:)`` (an ``ServiceVeto/Rule``) still reads the code and
/// message from the whole body; decoding, paging and the cache work on the content.
///
/// ```swift
/// struct Shop: Service {
///     …
///     var envelope: ResponseEnvelope? { ResponseEnvelope(dataField: "data") }
/// }
/// ```
public struct ResponseEnvelope: Sendable, Hashable {
    /// The member names leading to the content, outermost first (`["result", "data"]` for
    /// `{"result": {"data": …}}`).
    public var path: [String]

    /// An envelope whose content is at `dataField`: a member name, or a dotted path of member
    /// names (`result.data`).
    ///
    /// - Parameter dataField: Where the content is.
    public init(dataField: String) {
        path = dataField.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The content's JSON, cut out of `body`.
    ///
    /// - Parameter body: A response body.
    /// - Returns: The bytes of the value at ``path``.
    /// - Throws: `DecodingError` when the body is not JSON or has no value there, naming the
    ///   path.
    public func content(of body: Data) throws -> Data {
        let tape: JSONTape
        do {
            tape = try JSONTape(parsing: [UInt8](body))
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "The body is not valid JSON: \(error.message) (at byte \(error.offset))."))
        }
        return try content(of: tape)
    }

    /// The content's JSON, cut out of a parsed body.
    package func content(of tape: JSONTape) throws(DecodingError) -> Data {
        let token = tape.tokens[try contentIndex(in: tape)]
        // A string's range is inside its quotes; the content keeps them.
        let range = token.kind == .string ? Int(token.start) - 1..<Int(token.end) + 1 : Int(token.start)..<Int(token.end)
        return Data(tape.bytes[range])
    }

    /// The token of the content in a parsed body, for a decoder that reads the same tape.
    package func contentIndex(in tape: JSONTape) throws(DecodingError) -> Int {
        var index = 0
        var walked: [any CodingKey] = []
        for name in path {
            guard tape.tokens[index].kind == .object else {
                throw DecodingError.typeMismatch(
                    [String: Any].self,
                    .init(codingPath: walked, debugDescription: "The envelope's \(described(walked)) is not an object, so it has no \"\(name)\" member."))
            }
            guard let member = tape.member(name, of: index) else {
                throw DecodingError.keyNotFound(
                    NameKey(name), .init(codingPath: walked, debugDescription: "The envelope has no \"\(path.joined(separator: "."))\" member for the content."))
            }
            walked.append(NameKey(name))
            index = member
        }
        return index
    }

    private func described(_ walked: [any CodingKey]) -> String {
        walked.isEmpty ? "body" : "\"" + walked.map(\.stringValue).joined(separator: ".") + "\""
    }
}
