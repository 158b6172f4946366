import AIFNetworking
import AIFNetworkingTesting
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// One of the demo shop's environments: the online and offline instances serve different data.
public enum ShopEnvironment: String, Sendable, CaseIterable {
    /// The "production" data: 1,003 goods.
    case online
    /// The test data: 25 test articles.
    case offline
}

/// Failures a test can ask the shop to produce.
public final class ShopFaults: Sendable {
    private let pages = NIOLockedValueBox(Set<Int>())
    private let exportCut = NIOLockedValueBox<Int?>(nil)
    private let notModified = NIOLockedValueBox(0)
    private let slowArrivals: (@Sendable (String) -> Void)?

    /// Creates a set of faults (none).
    ///
    /// - Parameter slowArrivals: Told the `tag` query item of each request that reaches `slow`,
    ///   as it arrives (before its wait): a test awaits that instead of sleeping until a load
    ///   is under way. None by default.
    public init(slowArrivals: (@Sendable (String) -> Void)? = nil) {
        self.slowArrivals = slowArrivals
    }

    func slowRequestArrived(tag: String?) {
        if let tag { slowArrivals?(tag) }
    }

    /// The next request for listing page `page` fails with `503 Service Unavailable`.
    public func failOnce(page: Int) {
        pages.withLockedValue { _ = $0.insert(page) }
    }

    func takeFailure(page: Int) -> Bool {
        pages.withLockedValue { $0.remove(page) != nil }
    }

    /// The next answer of `exports/catalogue.csv` announces all its bytes, sends `bytes` of
    /// them, and closes the connection.
    public func cutNextExport(after bytes: Int) {
        exportCut.withLockedValue { $0 = bytes }
    }

    /// How many `304 Not Modified` answers the shop has sent (not a fault: what tests of
    /// revalidation count on the server).
    public var notModifiedAnswers: Int { notModified.withLockedValue { $0 } }

    func countNotModified() {
        notModified.withLockedValue { $0 += 1 }
    }

    func takeExportCut() -> Int? {
        exportCut.withLockedValue { cut in
            defer { cut = nil }
            return cut
        }
    }
}

/// The demo shop API, every route under `/v1` and signed with AIF-HMAC:
///
/// | Route | Answer |
/// |---|---|
/// | `GET goods?page=&page_size=` | a ``GoodsPage`` (page size 1–100, default 20) |
/// | `GET goods/{id}?cache_control=` (and `HEAD`) | a ``Goods``, or 404; with an `ETag` and a `Last-Modified`, 304 to a matching `If-None-Match` or `If-Modified-Since`; `cache_control`, if given, sent back as `Cache-Control` |
/// | `GET goods/{id}/moved` | 308 to `goods/{id}` (a relative `Location`) |
/// | `POST orders` `{"goods_id", "quantity"}` | 201 and the ``Order``; 400 for a bad body |
/// | `GET`/`PUT`/`DELETE orders/{id}` | the ``Order`` / the changed ``Order`` / 204 |
/// | `GET slow?ms=` | `{"slept_ms": …}` after that long (at most 30 s) |
/// | `GET exports/catalogue.csv` | the catalogue as CSV, a hundred times over (about 3 MiB), with an `ETag`; honours `Range: bytes=N-` and `If-Range` (206) |
/// | `GET coupons/{code}` | 200 always: `{"code": 0, …}` for `WELCOME10`, else `{"code": 4001, "message": "coupon expired"}` |
/// | `POST auth/token`, `GET account`, `GET account-in-body` | access tokens: see ``ShopTokens`` |
/// | `GET`/`POST flaky/{key}?failures=&status=&retry_after=&retry_after_date=` | the first `failures` (default 2) requests for `key` fail with `status` (default 503), with a `Retry-After` of `retry_after` seconds or an HTTP date `retry_after_date` seconds ahead if asked; then 200 and a ``FlakyReport`` |
///
/// JSON keys are snake_case; an unsigned or badly signed request gets 401 with the reason.
public enum ShopRoutes {
    /// The public key the demo shop accepts (demo keys, not secrets).
    public static let publicKey = "demo-shop-public"
    /// The private key the demo shop checks signatures with.
    public static let privateKey = "demo-shop-private-key"
    /// The two keys as the library takes them.
    public static let credentials = SigningContext.Credentials(publicKey: publicKey, privateKey: Secret(privateKey))

    /// The catalogue of an environment.
    public static func catalogue(_ environment: ShopEnvironment) -> [Goods] {
        switch environment {
        case .online:
            let kinds = ["Espresso beans", "Milk frother", "Pour-over kettle", "Ceramic cup", "Burr grinder", "Paper filters", "Scale", "Tamper"]
            return (1...1003).map { id in
                Goods(id: id, title: "\(kinds[(id - 1) % kinds.count]) no. \((id - 1) / kinds.count + 1)", priceCents: 990 + (id * 37) % 4000)
            }
        case .offline:
            return (1...25).map { Goods(id: $0, title: "Test article \($0)", priceCents: 100 * $0) }
        }
    }

    /// Adds the shop's routes under `/v1`, behind signature verification.
    ///
    /// - Parameters:
    ///   - router: The router to add to.
    ///   - environment: Which catalogue to serve.
    ///   - verification: Checks the signatures (the demo keys by default); `nil` accepts
    ///     unsigned requests.
    ///   - faults: Failures to produce on request.
    ///   - tokens: The access tokens of `auth/token` and `account` (see ``ShopTokens``).
    public static func add<Context: RequestContext>(
        to router: Router<Context>,
        environment: ShopEnvironment,
        verification: SignatureVerifier? = SignatureVerifier(.aifHMAC, credentials: ShopRoutes.credentials),
        faults: ShopFaults = ShopFaults(),
        tokens: ShopTokens = ShopTokens()
    ) {
        let goods = catalogue(environment)
        let orders = NIOLockedValueBox(OrderBook())
        let group = router.group("v1")
        if let verification { group.add(middleware: SignatureMiddleware<Context>(verification: verification)) }
        tokens.addRoutes(to: group)

        group.get("goods") { request, _ -> Response in
            let page = max(1, request.uri.queryParameters.get("page", as: Int.self) ?? 1)
            let size = min(100, max(1, request.uri.queryParameters.get("page_size", as: Int.self) ?? 20))
            if faults.takeFailure(page: page) {
                return try json(ShopError(code: 5030, message: "the listing is briefly unavailable"), status: .serviceUnavailable)
            }
            let start = min(goods.count, (page - 1) * size)
            let end = min(goods.count, start + size)
            return try json(GoodsPage(items: Array(goods[start..<end]), page: page, pageSize: size, total: goods.count, hasMore: end < goods.count))
        }
        // HEAD answers as GET does, without the body.
        @Sendable func answerGoods(_ request: Request, _ context: Context) async throws -> Response {
            guard let id = context.parameters.get("id", as: Int.self), let item = goods.first(where: { $0.id == id }) else {
                return try json(ShopError(code: 4040, message: "no such goods"), status: .notFound)
            }
            var headers: HTTPFields = [.eTag: "\"goods-\(environment.rawValue)-\(id)\"", .lastModified: catalogueLastModified]
            if let control = request.uri.queryParameters.get("cache_control") { headers[.cacheControl] = control }
            // If-None-Match decides when present (RFC 9110, 13.2.2); If-Modified-Since otherwise.
            let unchanged = if let tags = request.headers[.ifNoneMatch] {
                tags.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.contains(headers[.eTag]!)
            } else {
                request.headers[.ifModifiedSince].flatMap(parseHTTPDate).map { $0 >= catalogueDate } ?? false
            }
            if unchanged {
                faults.countNotModified()
                return Response(status: .notModified, headers: headers)
            }
            var response = try json(item)
            response.headers.append(contentsOf: headers)
            if request.method == .head { response.body = ResponseBody() }
            return response
        }
        group.on("goods/:id", method: .get, use: answerGoods)
        group.on("goods/:id", method: .head, use: answerGoods)
        // A detail's old address: a permanent redirect to `goods/:id`, relative to this one.
        group.get("goods/:id/moved") { _, context -> Response in
            let id = try context.parameters.require("id")
            return Response(status: .permanentRedirect, headers: [.location: "../\(id)"])
        }
        group.post("orders") { request, context -> Response in
            guard let body = try? await decode(OrderRequest.self, from: request, context: context), body.quantity > 0,
                goods.contains(where: { $0.id == body.goodsId })
            else {
                return try json(ShopError(code: 4000, message: "an order needs an existing goods_id and a positive quantity"), status: .badRequest)
            }
            let order = orders.withLockedValue { $0.place(goodsId: body.goodsId, quantity: body.quantity) }
            return try json(order, status: .created)
        }
        group.get("orders/:id") { _, context -> Response in
            guard let id = context.parameters.get("id", as: Int.self), let order = orders.withLockedValue({ $0.orders[id] }) else {
                return try json(ShopError(code: 4041, message: "no such order"), status: .notFound)
            }
            return try json(order)
        }
        group.put("orders/:id") { request, context -> Response in
            guard let body = try? await decode(OrderChange.self, from: request, context: context), body.quantity > 0 else {
                return try json(ShopError(code: 4000, message: "a change needs a positive quantity"), status: .badRequest)
            }
            guard let id = context.parameters.get("id", as: Int.self), let order = orders.withLockedValue({ $0.change(id, quantity: body.quantity) }) else {
                return try json(ShopError(code: 4041, message: "no such order"), status: .notFound)
            }
            return try json(order)
        }
        group.delete("orders/:id") { _, context -> Response in
            guard let id = context.parameters.get("id", as: Int.self), orders.withLockedValue({ $0.orders.removeValue(forKey: id) }) != nil else {
                return try json(ShopError(code: 4041, message: "no such order"), status: .notFound)
            }
            return Response(status: .noContent)
        }
        group.get("exports/:name") { request, context -> Response in
            guard context.parameters.get("name") == "catalogue.csv" else {
                return try json(ShopError(code: 4042, message: "no such export"), status: .notFound)
            }
            let export = environment == .online ? onlineExport : offlineExport
            return exportResponse(export, request: request, cutAfter: faults.takeExportCut())
        }
        group.get("slow") { request, _ -> Response in
            let milliseconds = min(30_000, max(0, request.uri.queryParameters.get("ms", as: Int.self) ?? 1000))
            faults.slowRequestArrived(tag: request.uri.queryParameters.get("tag"))
            try await Task.sleep(for: .milliseconds(milliseconds))
            return try json(["slept_ms": milliseconds])
        }
        let flaky = NIOLockedValueBox([String: FlakyReport]())
        let answerFlaky: @Sendable (Request, Context) async throws -> Response = { request, context in
            let key = context.parameters.get("key") ?? ""
            let query = request.uri.queryParameters
            let failures = max(0, query.get("failures", as: Int.self) ?? 2)
            let report = flaky.withLockedValue { reports in
                var report = reports[key] ?? FlakyReport(attempts: 0, nonces: [])
                report.attempts += 1
                if let nonce = query.get("nonce") { report.nonces.append(nonce) }
                reports[key] = report
                return report
            }
            guard report.attempts > failures else {
                let status = HTTPResponse.Status(code: min(599, max(400, query.get("status", as: Int.self) ?? 503)))
                var response = try json(ShopError(code: 5031, message: "failure \(report.attempts) of \(failures), as asked"), status: status)
                if let seconds = query.get("retry_after", as: Int.self) {
                    response.headers[.retryAfter] = String(seconds)
                } else if let seconds = query.get("retry_after_date", as: Int.self) {
                    response.headers[.retryAfter] = httpDate(Date().addingTimeInterval(TimeInterval(seconds)))
                }
                return response
            }
            return try json(report)
        }
        group.get("flaky/:key", use: answerFlaky)
        group.post("flaky/:key", use: answerFlaky)
        group.get("coupons/:code") { _, context -> Response in
            if context.parameters.get("code") == "WELCOME10" {
                return try json(Coupon(code: 0, coupon: "WELCOME10", discountPercent: 10))
            }
            return try json(ShopError(code: 4001, message: "coupon expired"))
        }
    }

    private struct OrderRequest: Decodable {
        var goodsId: Int
        var quantity: Int
    }

    private struct OrderChange: Decodable {
        var quantity: Int
    }

    private struct Coupon: Encodable {
        var code: Int
        var coupon: String
        var discountPercent: Int
    }

    private struct OrderBook {
        var orders: [Int: Order] = [:]
        var lastID = 0

        mutating func place(goodsId: Int, quantity: Int) -> Order {
            lastID += 1
            let order = Order(id: lastID, goodsId: goodsId, quantity: quantity, status: "placed")
            orders[lastID] = order
            return order
        }

        mutating func change(_ id: Int, quantity: Int) -> Order? {
            guard orders[id] != nil else { return nil }
            orders[id]!.quantity = quantity
            orders[id]!.status = "updated"
            return orders[id]
        }
    }

    private static func decode<Value: Decodable, Context: RequestContext>(_ type: Value.Type, from request: Request, context: Context) async throws -> Value {
        let buffer = try await request.body.collect(upTo: 1 << 20)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(type, from: Data(buffer.readableBytesView))
    }

    /// When the catalogue last changed: the `Last-Modified` of every goods.
    static let catalogueDate = Date(timeIntervalSince1970: 1_767_225_600)
    /// ``catalogueDate`` as the header says it, formatted once (a formatter per request held
    /// the server's threads for milliseconds each in a sanitized build).
    static let catalogueLastModified = httpDate(catalogueDate)

    /// Reads an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), as servers write `Date` and
    /// `Retry-After`.
    public static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// The catalogue as CSV, a hundred times over: a file big enough to show a download's
    /// progress.
    static func catalogueExport(_ goods: [Goods]) -> [UInt8] {
        // One listing, then copies of its bytes: cheap to make even in a debug build.
        let rows = Array(goods.map { "\($0.id),\"\($0.title)\",\($0.priceCents)\n" }.joined().utf8)
        var bytes = Array("id,title,price_cents\n".utf8)
        bytes.reserveCapacity(bytes.count + rows.count * 100)
        for _ in 1...100 { bytes += rows }
        return bytes
    }

    // Made on first use: most shops never serve an export.
    private static let onlineExport = ByteBuffer(bytes: catalogueExport(catalogue(.online)))
    private static let offlineExport = ByteBuffer(bytes: catalogueExport(catalogue(.offline)))

    /// The export's version, for `ETag` and `If-Range`.
    static let exportTag = "\"catalogue-v1\""

    /// The whole export (200), or the rest of it from a `Range: bytes=N-` whose `If-Range`
    /// names this version (206); cut short after `cutAfter` bytes when asked.
    static func exportResponse(_ export: ByteBuffer, request: Request, cutAfter: Int?) -> Response {
        var first = 0
        if let range = request.headers[.range], range.hasPrefix("bytes="), range.hasSuffix("-"),
            let start = Int(range.dropFirst("bytes=".count).dropLast()), request.headers[.ifRange].map({ $0 == exportTag }) ?? true
        {
            guard start < export.readableBytes else {
                return Response(status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(export.readableBytes)"])
            }
            first = start
        }
        let body = export.getSlice(at: first, length: export.readableBytes - first)!
        var headers: HTTPFields = [.contentType: "text/csv", .eTag: exportTag, .acceptRanges: "bytes", .contentLength: "\(body.readableBytes)"]
        if first > 0 { headers[.contentRange] = "bytes \(first)-\(export.readableBytes - 1)/\(export.readableBytes)" }
        let status: HTTPResponse.Status = first > 0 ? .partialContent : .ok
        guard let cutAfter else { return Response(status: status, headers: headers, body: .init(byteBuffer: body)) }
        return Response(status: status, headers: headers, body: ResponseBody { writer in
            try await writer.write(body.getSlice(at: body.readerIndex, length: min(cutAfter, body.readableBytes))!)
            throw CancellationError()   // the connection closes with the body short
        })
    }

    static func json<Value: Encodable>(_ value: Value, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Refuses requests whose AIF-HMAC signature does not verify, with 401 and the reason.
struct SignatureMiddleware<Context: RequestContext>: RouterMiddleware {
    let verification: SignatureVerifier

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 1 << 20)
        do {
            try verification.verify(ReceivedRequest(request, body: body))
        } catch {
            return try ShopRoutes.json(ShopError(code: 4010, message: "signature refused: \(error)"), status: .unauthorized)
        }
        return try await next(request, context)
    }
}

/// The demo shop as a running server.
public enum DemoShopServer {
    /// Starts the shop for `environment` on 127.0.0.1, on a port the system picks unless given one.
    ///
    /// - Parameters:
    ///   - environment: Which catalogue to serve.
    ///   - verifiesSignatures: Whether requests must carry an AIF-HMAC signature made with
    ///     ``ShopRoutes/publicKey`` and ``ShopRoutes/privateKey``; yes by default.
    ///   - faults: Failures to produce on request; none by default.
    ///   - tokens: The access tokens it issues and checks; its own by default.
    ///   - port: The port (to start a stopped shop again where it was); 0, for any, by default.
    /// - Returns: The running server; call ``LocalServer/stop()`` when done.
    /// - Throws: When the server cannot bind.
    public static func start(
        environment: ShopEnvironment = .online, verifiesSignatures: Bool = true, faults: ShopFaults = ShopFaults(), tokens: ShopTokens = ShopTokens(),
        port: Int = 0
    ) async throws -> LocalServer {
        let router = Router()
        let verification = verifiesSignatures ? SignatureVerifier(.aifHMAC, credentials: ShopRoutes.credentials) : nil
        ShopRoutes.add(to: router, environment: environment, verification: verification, faults: faults, tokens: tokens)
        return try await LocalServer.start(router: router, port: port)
    }
}
