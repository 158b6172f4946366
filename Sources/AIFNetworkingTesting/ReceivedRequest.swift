import AIFServices
import AIFTransport
import Foundation

/// A request as a server receives it — the parts a signature is checked against.
public struct ReceivedRequest: Sendable {
    /// The method, as sent (`GET`).
    public var method: String
    /// The host, and the port when it is not the scheme's default; `nil` when unknown.
    public var authority: String?
    /// The path, percent-encoded exactly as sent (`/v1/goods/42`).
    public var path: String
    /// The query without `?`, percent-encoded exactly as sent; empty for none.
    public var query: String
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body's bytes.
    public var body: [UInt8]

    /// Creates a received request from its parts.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - authority: The host (and port); `nil` by default.
    ///   - path: The percent-encoded path.
    ///   - query: The percent-encoded query, without `?`; none by default.
    ///   - headers: The header fields; none by default.
    ///   - body: The body; none by default.
    public init(method: String, authority: String? = nil, path: String, query: String = "", headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.authority = authority
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The request as a server would receive it from the library: its URL's path and query as
    /// written, its headers, and its body's bytes (a file body read from its file).
    ///
    /// - Parameter request: The request.
    /// - Throws: ``SignatureRejection/malformed(_:)`` for a streamed or multipart body, whose
    ///   bytes exist only as they are sent, or a body file that cannot be read.
    public init(_ request: HTTPRequest) throws(SignatureRejection) {
        let url = request.url
        method = request.method.rawValue
        path = url.path(percentEncoded: true)
        query = url.query(percentEncoded: true) ?? ""
        headers = request.headers
        if let host = url.host(percentEncoded: true) {
            let scheme = url.scheme?.lowercased()
            let defaultPort = url.port == nil || (scheme == "https" && url.port == 443) || (scheme == "http" && url.port == 80)
            authority = defaultPort ? host : "\(host):\(url.port!)"
        }
        switch request.body {
        case .empty:
            body = []
        case .bytes(let data):
            body = Array(data)
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else { throw .malformed("the body file \(path) cannot be read") }
            body = Array(data)
        case .multipart, .stream:
            throw .malformed("a streamed or multipart body is known only as it is sent, so its signature cannot be checked here")
        }
    }

    /// The query's name–value pairs, in order, percent-decoded.
    var queryPairs: [(name: String, value: String)] {
        query.split(separator: "&").filter { !$0.isEmpty }.map { piece in
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let value = parts.count > 1 ? String(parts[1]) : ""
            return (name.removingPercentEncoding ?? name, value.removingPercentEncoding ?? value)
        }
    }
}
