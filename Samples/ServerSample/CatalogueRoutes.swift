import AIFNetworking
import Foundation
import HTTPTypes
import Hummingbird

/// The server's routes: `GET /goods/{id}` answers with the backend's article, loaded through
/// the SDK — one `Endpoint` call per request, the caller's trace context carried on — and a
/// failure of the backend mapped to the answer a client of this server should get (a 503 with
/// `Retry-After` while the backend's circuit is open).
struct CatalogueRoutes: Sendable {
    let proxy: APIProxy
    let registry: ServiceRegistry
    /// The backend's article: ``Endpoint/goodsDetail``, without its cache when the server was
    /// told to send every request on (`--no-cache`, what the benchmark measures).
    let goodsDetail: Endpoint<Goods>
    /// How the loads ended, by outcome (`success`, or the error's kind): the summary printed
    /// at exit.
    let outcomes = Outcomes()

    func add(to router: Router<BasicRequestContext>) {
        router.get("goods/:id") { request, context -> Response in
            let id = try context.parameters.require("id", as: Int.self)
            let manager = APIManager(goodsDetail, proxy: proxy, registry: registry)
            do {
                let goods = try await manager.load(["id": id], headers: Self.traceContext(of: request)).content
                outcomes.record("success")
                return try Self.json(goods, status: .ok)
            } catch let error as APIError {
                outcomes.record(error.kind.identifier)
                var response = try Self.json(["error": error.kind.identifier, "message": error.message], status: Self.status(for: error))
                // When the backend's circuit lets a request out again.
                if let retryableAt = error.retryableAt {
                    response.headers[.retryAfter] = String(max(1, Int(retryableAt.timeIntervalSinceNow.rounded(.up))))
                }
                return response
            }
        }
    }

    /// The caller's W3C trace context (`traceparent`, `tracestate`), passed on to the backend
    /// as it came: this server records no span of its own, so the backend's span is the
    /// caller's child.
    static func traceContext(of request: Request) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for name in ["traceparent", "tracestate"] {
            if let field = HTTPField.Name(name), let value = request.headers[field] { headers.set(name: name, value: value) }
        }
        return headers
    }

    /// The status this server answers with when its backend load failed.
    static func status(for error: APIError) -> HTTPResponse.Status {
        switch error.kind {
        case .httpStatus where error.statusCode == 404: .notFound
        case .shutDown, .circuitOpen: .serviceUnavailable
        case .timeout: .gatewayTimeout
        default: .badGateway
        }
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let body = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// Counts outcomes from any thread. An `NSLock` (a pthread mutex), not `Synchronization.Mutex`:
/// the thread sanitizer does not see a `Mutex`'s futex as ordering, and reported the counts as a
/// race when the sample ran under it (the suite's SIGTERM test). `@unchecked Sendable`: its one
/// stored variable, `counts`, is read and written only while `lock` is held.
final class Outcomes: @unchecked Sendable {
    // Every access to `counts` holds `lock`.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func record(_ outcome: String) {
        lock.withLock { counts[outcome, default: 0] += 1 }
    }

    /// `success=3 shut_down=2`, sorted by outcome.
    var summary: String {
        lock.withLock { counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }
}
