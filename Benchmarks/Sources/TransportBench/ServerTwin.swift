import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// The server sample's twin, for the server comparison: the same route (`GET /goods/{id}`), the
/// same answer and the same failure mapping, with the backend called through AsyncHTTPClient
/// directly, as a Hummingbird app without this SDK would — Foundation's `JSONDecoder`, one
/// shared client with as many connections to the backend as the sample's transport (64), the
/// caller's trace context passed on. No cache (the sample runs with `--no-cache`) and no circuit
/// breaking (AsyncHTTPClient has none).
enum ServerTwin {
    struct Goods: Codable, Sendable {
        var id: Int
        var title: String
        var priceCents: Int
    }

    static func run(backend: String, port: Int) async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        configuration.httpVersion = .http1Only
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let base = backend.hasSuffix("/") ? String(backend.dropLast()) : backend

        let router = Router()
        router.get("goods/:id") { request, context -> Response in
            let id = try context.parameters.require("id", as: Int.self)
            var outgoing = HTTPClientRequest(url: "\(base)/v1/goods/\(id)")
            for name in ["traceparent", "tracestate"] {
                if let field = HTTPField.Name(name), let value = request.headers[field] { outgoing.headers.add(name: name, value: value) }
            }
            do {
                let response = try await client.execute(outgoing, timeout: .seconds(60))
                let body = try await response.body.collect(upTo: 1 << 20)
                guard response.status == .ok else {
                    return try json(["error": "http_status", "message": "the backend answered \(response.status.code)"],
                        status: response.status == .notFound ? .notFound : .badGateway)
                }
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                return try json(try decoder.decode(Goods.self, from: Data(body.readableBytesView)), status: .ok)
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                return try json(["error": "timeout", "message": "\(error)"], status: .gatewayTimeout)
            } catch {
                return try json(["error": "transport", "message": "\(error)"], status: .badGateway)
            }
        }
        var logger = Logger(label: "ServerTwin")
        logger.logLevel = .warning
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: nil),
            logger: logger)
        do {
            try await application.runService()
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// The sample's answer: sorted keys, snake case.
    private static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let body = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
