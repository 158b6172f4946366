import AIFNetworkingTesting
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// The demo pay service: a Stripe-shaped API, with Stripe's habits as its documentation gives
/// them — secret keys for a test mode and a live mode on one URL, form bodies read as Rack reads
/// them (``PayForm``), lists paged after their last item's id, `Idempotency-Key`s, errors in an
/// `error` object, and the `Stripe-Should-Retry` header.
///
/// | Route | Answer |
/// |---|---|
/// | every route | 401 `{"error": {"type": "invalid_request_error", "message": "Invalid API Key provided: sk_test_****…"}}` without `Authorization: Bearer KEY` (or Basic, the key as the user) of ``PayRoutes/testKey`` or ``PayRoutes/liveKey``; each key sees its mode's objects only (`livemode`) |
/// | `POST v1/customers` (`email`, `name`, `metadata[…]`) | the customer, `cus_…` |
/// | `GET v1/customers?limit=&starting_after=&ending_before=` | `{"object": "list", "url", "has_more", "data"}`, newest first, `limit` 1–100 (10 by default); 25 test customers and 3 live ones to start with |
/// | `GET v1/customers/{id}` | the customer; 404 `resource_missing` |
/// | `POST v1/checkout/sessions` (`mode`, `line_items[i][price]` or `line_items[i][price_data][currency\|unit_amount\|product_data][name]`, `line_items[i][quantity]`) | the session and its line items; 400 `parameter_invalid`/`parameter_missing` naming the parameter (an item with both `price` and `price_data`: "You may only specify one of these parameters: price, price_data.") |
/// | `POST v1/payment_intents` (`amount`, `currency`, `metadata[simulate]`) | the payment intent; `simulate`: `lock_timeout` — the first attempt for its key 409 `lock_timeout` with `Stripe-Should-Retry: true`; `rate_limit` — the first 429 `rate_limit` without `Retry-After`; `unavailable` — 503 `api_error` with `Stripe-Should-Retry: false`, every time; `hold` — the work goes on until another request with its key was refused as in use (at most 5 s) |
///
/// Every `POST` honours `Idempotency-Key`: the same key with the same parameters answers what
/// the first request was answered (`Idempotent-Replayed: true`), with other parameters 400
/// `idempotency_error`, and while the first is still being worked on 409
/// `idempotency_key_in_use`. A failure from a conflict (`lock_timeout`) or a rate limit is not
/// kept: the key may be used again. What each `POST` came to is in the ``PayLedger``.
public enum PayRoutes {
    /// The secret key of the test mode (a demo value, not a secret).
    public static let testKey = "sk_test_demo_4eC39HqLyjWDarjtT1zdp7dc"
    /// The secret key of the live mode (a demo value, not a secret).
    public static let liveKey = "sk_live_demo_51H8vVqKd9xQpR2mN4tY"

    /// The prices the demo knows, by ID: unit amount in cents and product name, in USD.
    static let prices: [String: (amount: Int, name: String)] = ["price_cup": (1200, "Ceramic cup"), "price_beans": (1890, "Espresso beans")]

    /// Adds the service's routes at the router's root.
    ///
    /// - Parameters:
    ///   - router: The router to add to.
    ///   - ledger: Where each `POST` is recorded.
    public static func add<Context: RequestContext>(to router: Router<Context>, ledger: PayLedger = PayLedger()) {
        let store = PayStore()
        let group = router.group("v1")
        group.add(middleware: SecretKeyMiddleware<Context>())

        group.post("customers") { request, _ -> Response in
            try await idempotent(request, store: store, ledger: ledger) { mode, form throws(PayFailure) in
                var fields: [String: Any] = ["object": "customer", "livemode": mode == .live, "metadata": form["metadata"]?.jsonObject ?? [String: Any]()]
                fields["email"] = form["email"]?.text
                fields["name"] = form["name"]?.text
                return .ok(store.create(in: mode, prefix: "cus", fields: fields, list: \.customers))
            }
        }
        group.get("customers") { request, _ -> Response in
            let mode = try mode(of: request)
            let query = request.uri.queryParameters
            guard let limit = Int(query.get("limit") ?? "10"), (1...100).contains(limit) else {
                return failure(400, type: "invalid_request_error", code: "parameter_invalid_integer", param: "limit", "Invalid integer: limit must be from 1 to 100.")
            }
            let all = store.objects(in: mode, \.customers)
            var start = 0
            var end = all.count
            if let after = query.get("starting_after") {
                guard let index = all.firstIndex(where: { $0["id"] as? String == after }) else {
                    return failure(400, type: "invalid_request_error", code: "resource_missing", param: "starting_after", "No such customer: '\(after)'")
                }
                start = index + 1
            } else if let before = query.get("ending_before") {
                guard let index = all.firstIndex(where: { $0["id"] as? String == before }) else {
                    return failure(400, type: "invalid_request_error", code: "resource_missing", param: "ending_before", "No such customer: '\(before)'")
                }
                end = index
                start = max(0, index - limit)
            }
            let page = Array(all[start..<min(end, start + limit)])
            let hasMore = query.get("ending_before") != nil ? start > 0 : start + page.count < all.count
            return json(["object": "list", "url": "/v1/customers", "has_more": hasMore, "data": page])
        }
        group.get("customers/:id") { request, context -> Response in
            let mode = try mode(of: request)
            let id = context.parameters.get("id") ?? ""
            guard let customer = store.objects(in: mode, \.customers).first(where: { $0["id"] as? String == id }) else {
                return failure(404, type: "invalid_request_error", code: "resource_missing", param: "id", "No such customer: '\(id)'")
            }
            return json(customer)
        }
        group.post("checkout/sessions") { request, _ -> Response in
            try await idempotent(request, store: store, ledger: ledger) { mode, form throws(PayFailure) in
                try checkoutSession(form, mode: mode, store: store)
            }
        }
        group.post("payment_intents") { request, _ -> Response in
            try await idempotent(request, store: store, ledger: ledger) { mode, form throws(PayFailure) in
                try await paymentIntent(form, mode: mode, store: store, key: request.headers[idempotencyKey])
            }
        }
    }

    // MARK: Objects

    /// A checkout session for the form's line items.
    private static func checkoutSession(_ form: PayForm.Table, mode: PayMode, store: PayStore) throws(PayFailure) -> PayOutcome {
        guard let given = form["line_items"] else { throw PayFailure.missing("line_items") }
        guard case .list(let items) = given else { throw PayFailure.invalid("line_items", "Invalid array") }
        var lines: [[String: Any]] = []
        var total = 0
        for (index, item) in items.enumerated() {
            let at = "line_items[\(index)]"
            guard case .table(let fields) = item else { throw PayFailure.invalid(at, "Invalid object") }
            guard let quantityText = fields["quantity"]?.text else { throw PayFailure.missing("\(at)[quantity]") }
            guard let quantity = Int(quantityText), quantity > 0 else { throw PayFailure.invalid("\(at)[quantity]", "Invalid integer: \(quantityText)", code: "parameter_invalid_integer") }
            let amount: Int
            let price: [String: Any]
            switch (fields["price"], fields["price_data"]) {
            case (_?, _?):
                throw PayFailure.invalid(at, "You may only specify one of these parameters: price, price_data.")
            case (nil, nil):
                throw PayFailure.missing("\(at)[price]")
            case (let id?, nil):
                guard let id = id.text, let known = prices[id] else { throw PayFailure(404, code: "resource_missing", param: "\(at)[price]", "No such price: '\(id.text ?? "")'") }
                amount = known.amount
                price = ["id": id, "object": "price", "unit_amount": known.amount, "currency": "usd", "product": known.name]
            case (nil, let data?):
                guard case .table(let data) = data else { throw PayFailure.invalid("\(at)[price_data]", "Invalid object") }
                guard let currency = data["currency"]?.text else { throw PayFailure.missing("\(at)[price_data][currency]") }
                guard let unitText = data["unit_amount"]?.text else { throw PayFailure.missing("\(at)[price_data][unit_amount]") }
                guard let unit = Int(unitText), unit >= 0 else {
                    throw PayFailure.invalid("\(at)[price_data][unit_amount]", "Invalid integer: \(unitText)", code: "parameter_invalid_integer")
                }
                guard let name = data["product_data"]?.table?["name"]?.text else { throw PayFailure.missing("\(at)[price_data][product_data][name]") }
                amount = unit
                price = ["id": "price_inline_\(index)", "object": "price", "unit_amount": unit, "currency": currency, "product": name]
            }
            total += amount * quantity
            lines.append(["object": "item", "quantity": quantity, "amount_total": amount * quantity, "price": price, "description": price["product"] ?? ""])
        }
        let fields: [String: Any] = [
            "object": "checkout.session", "livemode": mode == .live, "mode": form["mode"]?.text ?? "payment", "amount_total": total, "currency": "usd",
            "line_items": ["object": "list", "has_more": false, "data": lines],
        ]
        return .ok(store.create(in: mode, prefix: mode == .live ? "cs_live" : "cs_test", fields: fields, list: \.sessions))
    }

    /// A payment intent, or the failure its `metadata[simulate]` asks for.
    private static func paymentIntent(_ form: PayForm.Table, mode: PayMode, store: PayStore, key: String?) async throws(PayFailure) -> PayOutcome {
        guard let amountText = form["amount"]?.text else { throw PayFailure.missing("amount") }
        guard let amount = Int(amountText), amount > 0 else { throw PayFailure.invalid("amount", "Invalid integer: \(amountText)", code: "parameter_invalid_integer") }
        guard let currency = form["currency"]?.text else { throw PayFailure.missing("currency") }
        let simulate = form["metadata"]?.table?["simulate"]?.text
        let firstTime = store.firstTime(simulate ?? "", key: key ?? "\(form.entries.map(\.key))\(amountText)")
        switch simulate {
        case "lock_timeout" where firstTime:
            return .fleeting(PayFailure(
                409, type: "invalid_request_error", code: "lock_timeout",
                "This object cannot be accessed right now because another API request or Stripe process is currently accessing it. If you see this error intermittently, retry the request.",
                shouldRetry: true))
        case "rate_limit" where firstTime:
            return .fleeting(PayFailure(
                429, type: "rate_limit_error", code: "rate_limit",
                "Too many requests hit the API too quickly. We recommend an exponential backoff of your requests."))
        case "unavailable":
            return .kept(PayFailure(503, type: "api_error", "The service is unavailable for this request.", shouldRetry: false))
        case "hold":
            // Until a second request with this key has met it in progress (at most 5 s).
            let deadline = ContinuousClock.now + .seconds(5)
            while let key, !store.wasRefusedInUse(key), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(2))
            }
        default:
            break
        }
        let fields: [String: Any] = [
            "object": "payment_intent", "livemode": mode == .live, "amount": amount, "currency": currency, "status": "requires_payment_method",
            "metadata": form["metadata"]?.jsonObject ?? [String: Any](),
        ]
        return .ok(store.create(in: mode, prefix: "pi", fields: fields, list: \.paymentIntents))
    }

    // MARK: Idempotency

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// Answers a `POST` with what `work` makes of its form — or, for an `Idempotency-Key` used
    /// before, what that request was answered — and records it in the ledger.
    private static func idempotent(
        _ request: Request, store: PayStore, ledger: PayLedger, _ work: (PayMode, PayForm.Table) async throws(PayFailure) -> PayOutcome
    ) async throws -> Response {
        let mode = try mode(of: request)
        let buffer = try await request.body.collect(upTo: 1 << 20)
        let body = String(decoding: buffer.readableBytesView, as: UTF8.self)
        let key = request.headers[idempotencyKey]
        let path = request.uri.path
        func answer(_ entry: PayStore.Answer, _ outcome: PayLedger.Outcome) -> Response {
            ledger.record(PayLedger.Entry(method: "POST", path: path, idempotencyKey: key, body: body, outcome: outcome))
            return entry.response(replayed: outcome == .replayed)
        }
        if let key {
            switch store.claim(key, in: mode, body: body) {
            case .claimed: break
            case .replay(let stored): return answer(stored, .replayed)
            case .inUse:
                defer { store.noteRefusedInUse(key) }
                return answer(PayFailure(
                    409, type: "idempotency_error", code: "idempotency_key_in_use",
                    "There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): \(key). Please try again later."
                ).answer, .keyInUse)
            case .otherParameters:
                return answer(PayFailure(
                    400, type: "idempotency_error",
                    "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '\(key)' if you meant to execute a different request."
                ).answer, .keyReusedWithOtherParameters)
            }
        }
        let outcome: PayOutcome
        do throws(PayFailure) {
            let form: PayForm.Table
            do throws(PayForm.Invalid) {
                form = try PayForm.parse(body)
            } catch {
                throw PayFailure.invalid(error.parameter, "Invalid request: \(error.description)")
            }
            let resolved = PayForm.Table(entries: form.entries.map { ($0.key, $0.value.resolvingIndexes()) })
            outcome = try await work(mode, resolved)
        } catch {
            // Invalid parameters are not kept: the key may be used again.
            outcome = .fleeting(error)
        }
        let entry: PayStore.Answer
        let recorded: PayLedger.Outcome
        switch outcome {
        case .ok(let object):
            entry = PayStore.Answer(status: 200, object: object, shouldRetry: nil)
            recorded = .created
        case .kept(let failure):
            entry = failure.answer
            recorded = .failed(failure.status)
        case .fleeting(let failure):
            entry = failure.answer
            recorded = .failed(failure.status)
        }
        if let key {
            if case .fleeting = outcome { store.release(key, in: mode) } else { store.keep(entry, for: key, in: mode) }
        }
        return answer(entry, recorded)
    }

    // MARK: Keys and answers

    /// The mode the request's key opens (checked by ``SecretKeyMiddleware``).
    static func mode(of request: Request) throws -> PayMode {
        guard let key = secretKey(request) else { throw HTTPError(.unauthorized) }
        return key == liveKey ? .live : .test
    }

    /// The secret key a request carries: a bearer token, or Basic's user.
    static func secretKey(_ request: Request) -> String? {
        guard let authorization = request.headers[.authorization] else { return nil }
        if authorization.hasPrefix("Bearer ") { return String(authorization.dropFirst("Bearer ".count)) }
        guard authorization.hasPrefix("Basic "), let data = Data(base64Encoded: String(authorization.dropFirst("Basic ".count))) else { return nil }
        return String(decoding: data, as: UTF8.self).split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
    }

    static func failure(_ status: Int, type: String, code: String? = nil, param: String? = nil, _ message: String) -> Response {
        PayFailure(status, type: type, code: code, param: param, message).answer.response(replayed: false)
    }

    static func json(_ object: Any, status: Int = 200, headers: HTTPFields = [:]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        var fields = headers
        fields[.contentType] = "application/json"
        let reasons = [200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 409: "Conflict", 429: "Too Many Requests", 503: "Service Unavailable"]
        return Response(
            status: HTTPResponse.Status(code: status, reasonPhrase: reasons[status] ?? ""), headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Which of the demo pay's modes a key opens.
public enum PayMode: String, Sendable {
    /// The test mode: ``PayRoutes/testKey``.
    case test
    /// The live mode: ``PayRoutes/liveKey``.
    case live
}

/// What the demo pay did with each `POST`, for tests to check: which idempotency key it carried
/// and whether it made something, was answered again, or was refused.
public final class PayLedger: Sendable {
    /// What came of a `POST`.
    public enum Outcome: Sendable, Equatable {
        /// An object was made.
        case created
        /// Its key's first answer was sent again.
        case replayed
        /// Refused: another request with its key was still being worked on.
        case keyInUse
        /// Refused: its key came before with other parameters.
        case keyReusedWithOtherParameters
        /// Failed with this status.
        case failed(Int)
    }

    /// One `POST`.
    public struct Entry: Sendable, Equatable {
        /// Always `POST`.
        public var method: String
        /// The path (`/v1/customers`).
        public var path: String
        /// Its `Idempotency-Key`, if it had one.
        public var idempotencyKey: String?
        /// The form body as it came.
        public var body: String
        /// What came of it.
        public var outcome: Outcome
    }

    private let entries = NIOLockedValueBox<[Entry]>([])

    /// An empty ledger.
    public init() {}

    /// Every `POST` so far, in order.
    public var requests: [Entry] { entries.withLockedValue { $0 } }

    func record(_ entry: Entry) {
        entries.withLockedValue { $0.append(entry) }
    }
}

/// A refusal as the demo pay writes it: `{"error": {"type", "code", "param", "message"}}`.
struct PayFailure: Error {
    let status: Int
    let type: String
    let code: String?
    let param: String?
    let message: String
    /// `Stripe-Should-Retry`, when the failure says.
    let shouldRetry: Bool?

    init(_ status: Int, type: String = "invalid_request_error", code: String? = nil, param: String? = nil, _ message: String, shouldRetry: Bool? = nil) {
        self.status = status
        self.type = type
        self.code = code
        self.param = param
        self.message = message
        self.shouldRetry = shouldRetry
    }

    static func missing(_ param: String) -> PayFailure {
        PayFailure(400, code: "parameter_missing", param: param, "Missing required param: \(param).")
    }

    static func invalid(_ param: String, _ message: String, code: String = "parameter_invalid") -> PayFailure {
        PayFailure(400, code: code, param: param, message)
    }

    var answer: PayStore.Answer {
        var error: [String: Any] = ["type": type, "message": message]
        error["code"] = code
        error["param"] = param
        return PayStore.Answer(status: status, object: ["error": error], shouldRetry: shouldRetry)
    }
}

/// What a `POST`'s work came to.
enum PayOutcome {
    /// An object, answered with 200.
    case ok([String: Any])
    /// A failure kept for its idempotency key, as a success is.
    case kept(PayFailure)
    /// A failure not kept: the key may be used again.
    case fleeting(PayFailure)
}

/// The demo pay's objects, per mode, and its idempotency keys.
///
/// - Note: `@unchecked Sendable` is safe because its one stored property, the state, is reached
///   only under its lock, and the objects in it (Foundation property-list values) are never
///   changed once made.
final class PayStore: @unchecked Sendable {
    /// An answer, as sent and as replayed.
    struct Answer: @unchecked Sendable {
        // Unchecked Sendable is safe: `object` holds Foundation property-list values (text,
        // numbers, arrays, dictionaries), immutable once made.
        let status: Int
        let object: [String: Any]
        let shouldRetry: Bool?

        func response(replayed: Bool) -> Response {
            var headers: HTTPFields = [:]
            if let shouldRetry { headers[HTTPField.Name("Stripe-Should-Retry")!] = shouldRetry ? "true" : "false" }
            if replayed { headers[HTTPField.Name("Idempotent-Replayed")!] = "true" }
            return PayRoutes.json(object, status: status, headers: headers)
        }
    }

    /// One mode's objects, newest first.
    struct Objects {
        var customers: [[String: Any]] = []
        var sessions: [[String: Any]] = []
        var paymentIntents: [[String: Any]] = []
    }

    private enum KeyState {
        case inProgress(body: String)
        case done(body: String, answer: Answer)
    }

    private struct State {
        var objects: [PayMode: Objects] = [:]
        var keys: [PayMode: [String: KeyState]] = [:]
        var counter = 1000
        var simulated: Set<String> = []
        var refusedInUse: Set<String> = []
    }

    enum Claim {
        case claimed
        case replay(Answer)
        case inUse
        case otherParameters
    }

    private let state = NIOLockedValueBox(State())

    init() {
        let created = 1_767_225_600
        state.withLockedValue { state in
            for (mode, count) in [(PayMode.test, 25), (.live, 3)] {
                state.objects[mode] = Objects(customers: (1...count).reversed().map { number in
                    [
                        "id": "cus_\(mode == .live ? "L" : "T")\(String(format: "%03d", number))", "object": "customer", "livemode": mode == .live,
                        "email": "customer\(number)@\(mode == .live ? "live" : "test").example", "name": "Customer \(number)",
                        "created": created + number * 3600, "metadata": [String: Any](),
                    ]
                })
            }
        }
    }

    func objects(in mode: PayMode, _ list: KeyPath<Objects, [[String: Any]]>) -> [[String: Any]] {
        state.withLockedValue { $0.objects[mode]?[keyPath: list] ?? [] }
    }

    /// Makes an object with a fresh ID, newest first in its list.
    func create(in mode: PayMode, prefix: String, fields: [String: Any], list: WritableKeyPath<Objects, [[String: Any]]>) -> [String: Any] {
        state.withLockedValue { state in
            state.counter += 1
            var object = fields
            object["id"] = "\(prefix)_\(mode == .live ? "L" : "T")\(state.counter)"
            object["created"] = 1_767_225_600 + state.counter
            state.objects[mode, default: Objects()][keyPath: list].insert(object, at: 0)
            return object
        }
    }

    /// Whether `simulation` has not yet been produced for `key`; notes that it now is.
    func firstTime(_ simulation: String, key: String) -> Bool {
        state.withLockedValue { $0.simulated.insert("\(simulation)|\(key)").inserted }
    }

    /// Notes that a request with `key` was refused: another with it was in progress.
    func noteRefusedInUse(_ key: String) {
        state.withLockedValue { _ = $0.refusedInUse.insert(key) }
    }

    /// Whether a request with `key` was refused for one in progress.
    func wasRefusedInUse(_ key: String) -> Bool {
        state.withLockedValue { $0.refusedInUse.contains(key) }
    }

    func claim(_ key: String, in mode: PayMode, body: String) -> Claim {
        state.withLockedValue { state in
            switch state.keys[mode]?[key] {
            case nil:
                state.keys[mode, default: [:]][key] = .inProgress(body: body)
                return .claimed
            case .inProgress(let first)?:
                return first == body ? .inUse : .otherParameters
            case .done(let first, let answer)?:
                return first == body ? .replay(answer) : .otherParameters
            }
        }
    }

    func keep(_ answer: Answer, for key: String, in mode: PayMode) {
        state.withLockedValue { state in
            guard case .inProgress(let body)? = state.keys[mode]?[key] else { return }
            state.keys[mode]?[key] = .done(body: body, answer: answer)
        }
    }

    func release(_ key: String, in mode: PayMode) {
        state.withLockedValue { _ = $0.keys[mode]?.removeValue(forKey: key) }
    }
}

/// Refuses a request without one of the demo pay's secret keys: 401 and Stripe's message.
struct SecretKeyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let key = PayRoutes.secretKey(request)
        guard let key, key == PayRoutes.testKey || key == PayRoutes.liveKey else {
            let shown = key.map { "\($0.prefix(8))****\($0.suffix(4))" } ?? "none"
            return PayRoutes.failure(401, type: "invalid_request_error", "Invalid API Key provided: \(shown)")
        }
        return try await next(request, context)
    }
}

/// The demo pay as a running server.
public enum DemoPayServer {
    /// Starts the demo pay on 127.0.0.1, on a port the system picks unless given one.
    ///
    /// - Parameters:
    ///   - ledger: Where each `POST` is recorded.
    ///   - port: The port; 0, for any, by default.
    /// - Returns: The running server; call ``LocalServer/stop()`` when done.
    /// - Throws: When the server cannot bind.
    public static func start(ledger: PayLedger = PayLedger(), port: Int = 0) async throws -> LocalServer {
        let router = Router()
        PayRoutes.add(to: router, ledger: ledger)
        return try await LocalServer.start(router: router, port: port)
    }
}
