#if OpenAPI
import AIFNetworking
import AIFTransport
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Converting between swift-openapi-runtime's messages (swift-http-types) and this library's.
enum MessageConversion {
    /// The largest request body of known length collected into memory before it is sent (so
    /// that it can be signed, retried and sent again after a 307); a longer one, or one of
    /// unknown length, or one that can be read only once, is streamed as it is read.
    static let largestCollectedBody = 4 << 20

    /// The URL a generated client's request goes to: the server URL, then the request's path
    /// and query as the client wrote them (never decoded and encoded again).
    static func url(of request: HTTPTypes.HTTPRequest, baseURL: URL) throws(TransportError) -> URL {
        let path = request.path ?? "/"
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let text = base + (path.hasPrefix("/") ? path : "/" + path)
        guard let url = URL(string: text) else {
            throw TransportError(.invalidURL, url: text, detail: "the server URL and the operation's path do not make a URL")
        }
        return url
    }

    /// The header fields as this library's headers, in order.
    static func headers(_ fields: HTTPFields) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for field in fields { headers.add(name: field.name.rawName, value: field.value) }
        return headers
    }

    /// This library's response headers as header fields. A name swift-http-types refuses (not a
    /// token) fails the call rather than vanish from the response.
    static func fields(_ headers: HTTPHeaders, url: String) throws(TransportError) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for field in headers {
            guard let name = HTTPField.Name(field.name) else {
                throw TransportError(.invalidResponse, url: url, detail: "the response header name \(field.name.debugDescription) is not a valid field name")
            }
            fields.append(HTTPField(name: name, value: field.value))
        }
        return fields
    }

    /// The request body as the transport sends it: in memory when its length is known, small
    /// and it can be read again; streamed otherwise (with its length, when known).
    static func requestBody(_ body: HTTPBody?) async throws -> AIFTransport.HTTPRequest.Body {
        guard let body else { return .empty }
        switch body.length {
        case .known(let length) where length <= largestCollectedBody && body.iterationBehavior == .multiple:
            return .bytes(try await Data(collecting: body, upTo: Int(length)))
        case .known(let length):
            return .stream(HTTPRequest.BodyStream(body.map { Data($0) }, length: length))
        case .unknown:
            return .stream(HTTPRequest.BodyStream(body.map { Data($0) }))
        }
    }

    /// A streamed response body as the runtime's: read once, with the length the response
    /// announced (and no length for a body that is decoded as it arrives).
    static func responseBody(_ stream: AIFTransport.HTTPResponse.Streaming.Body, headers: HTTPHeaders, method: HTTPMethod, statusCode: Int) -> HTTPBody? {
        if method == .head || statusCode == 204 || statusCode == 304 { return nil }
        let length: HTTPBody.Length
        if headers["Content-Encoding"] == nil, let text = headers["Content-Length"], let count = Int64(text), count >= 0 {
            length = .known(count)
        } else {
            length = .unknown
        }
        return HTTPBody(stream.map { ArraySlice($0) }, length: length, iterationBehavior: .single)
    }

    /// A response body held in memory, as the runtime's.
    static func responseBody(_ data: Data, method: HTTPMethod, statusCode: Int) -> HTTPBody? {
        if method == .head || statusCode == 204 || statusCode == 304 { return nil }
        return HTTPBody(data)
    }

    /// The response head as the runtime's.
    static func response(statusCode: Int, headers: HTTPHeaders, url: String) throws(TransportError) -> HTTPTypes.HTTPResponse {
        HTTPTypes.HTTPResponse(status: .init(code: statusCode), headerFields: try fields(headers, url: url))
    }
}
#endif
