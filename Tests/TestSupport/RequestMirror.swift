import AIFNetworkingTesting
@_spi(CrossModule) import AIFTransport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A server that answers every request under `/v1/` with what it received, as JSON (a
/// ``RequestMirror/Mirrored``), and keeps it. A request whose `Authorization` is
/// `Bearer revoked` gets `401 {"message": "Bad credentials"}` instead, one with
/// `X-Answer-Status` that status with `X-Answer-Body` as its JSON body, and one with
/// `X-Answer-Events: a,b` a `text/event-stream` of those events' data. A request with
/// `X-Answer-Pages: N` is answered as page `page` (1 when the query has none) of N: with a
/// `Link: <…>; rel="next"` to the same path and query with the next page's number, until N.
final class RequestMirror: Sendable {
    /// A request as the server received it.
    struct Mirrored: Codable, Sendable, Equatable {
        var method: String
        var path: String
        /// The query as it came, percent-encoding and all.
        var query: String
        /// The headers by lower-cased name (the last of a repeated one).
        var headers: [String: String]
        /// The body as text.
        var body: String
    }

    let server: LocalServer
    private let received: Locked<[Mirrored]>

    private init(server: LocalServer, received: Locked<[Mirrored]>) {
        self.server = server
        self.received = received
    }

    static func start() async throws -> RequestMirror {
        let received = Locked<[Mirrored]>([])
        let router = Router()
        for method in [HTTPTypes.HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            router.on("v1/**", method: method) { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                var headers: [String: String] = [:]
                for field in request.headers { headers[field.name.canonicalName] = field.value }
                let mirrored = Mirrored(
                    method: request.method.rawValue, path: request.uri.path, query: request.uri.query ?? "", headers: headers,
                    body: String(buffer: body))
                received.withLock { $0.append(mirrored) }
                if let status = headers["x-answer-status"].flatMap(Int.init) {
                    return Response(
                        status: .init(code: status), headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: headers["x-answer-body"] ?? "")))
                }
                if let events = headers["x-answer-events"] {
                    let stream = events.split(separator: ",").map { "data: \($0.trimmingCharacters(in: .whitespaces))\n\n" }.joined()
                    return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: .init(byteBuffer: ByteBuffer(string: stream)))
                }
                if headers["authorization"] == "Bearer revoked" {
                    return Response(
                        status: .unauthorized, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: #"{"message": "Bad credentials"}"#)))
                }
                let json = try JSONEncoder().encode(mirrored)
                var answer: HTTPFields = [.contentType: "application/json"]
                if let pages = headers["x-answer-pages"].flatMap(Int.init), let host = request.head.authority ?? headers["host"] {
                    var items = URLComponents(string: "http://\(host)\(request.uri)")?.queryItems ?? []
                    let page = items.first { $0.name == "page" }.flatMap { $0.value.flatMap(Int.init) } ?? 1
                    if page < pages {
                        items.removeAll { $0.name == "page" }
                        items.insert(URLQueryItem(name: "page", value: String(page + 1)), at: 0)
                        var next = URLComponents(string: "http://\(host)\(request.uri.path)")!
                        next.queryItems = items
                        answer[.init("Link")!] = "<\(next.string!)>; rel=\"next\""
                    }
                }
                return Response(status: .ok, headers: answer, body: .init(byteBuffer: ByteBuffer(bytes: json)))
            }
        }
        return RequestMirror(server: try await LocalServer.start(router: router), received: received)
    }

    /// The requests received so far.
    var requests: [Mirrored] { received.withLock { $0 } }

    func stop() async {
        await server.stop()
    }
}
