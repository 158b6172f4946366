public import Foundation

/// An API defined by name (see ``/AIFServices/APIDefine``), ready to call: decoded into a type
/// given at the call, or into a ``/AIFServices/JSONValue``.
///
/// ```swift
/// try ServiceRegistry.shared.registerServices(inDirectory: URL(filePath: "Configs"))
/// try ServiceRegistry.shared.registerAPIs(inDirectory: URL(filePath: "Configs"))
///
/// let goods = try await api("goods.detail").load(["id": 7], as: Goods.self).content
/// let raw = try await api("goods.detail").load(["id": 7]).content   // a JSONValue
/// ```
///
/// A define is an ``Endpoint`` underneath (``endpoint(as:)``): a call runs through the same
/// pipeline as a manager's — the service's environment, signing, credentials, retries, cache,
/// observers. Its default parameters join the call's (the call's win); a path placeholder no
/// parameter fills fails the load before anything is sent, naming the define.
public struct DefinedAPI: Sendable {
    /// The define's name.
    public let name: String
    private let registry: ServiceRegistry
    private let proxy: APIProxy
    private let cache: ResponseCache

    /// The API named `name`, looked up when it is called.
    ///
    /// - Parameters:
    ///   - name: The define's name (`goods.detail`).
    ///   - registry: Where defines and services are registered; ``/AIFServices/ServiceRegistry/shared`` by default.
    ///   - proxy: The proxy; ``APIProxy/shared`` by default.
    ///   - cache: The response cache; ``ResponseCache/shared`` by default.
    public init(_ name: String, registry: ServiceRegistry = .shared, proxy: APIProxy = .shared, cache: ResponseCache = .shared) {
        self.name = name
        self.registry = registry
        self.proxy = proxy
        self.cache = cache
    }

    /// The define.
    ///
    /// - Throws: An ``APIError`` of kind ``APIError/Kind-swift.struct/configuration`` when no
    ///   API is defined under the name.
    public func define() throws(APIError) -> APIDefine {
        do {
            return try registry.api(named: name)
        } catch {
            throw APIError(.configuration, loadID: LoadID(rawValue: 0), service: "", path: name, message: error.description, underlyingError: error)
        }
    }

    /// The define as an endpoint whose content is `type`.
    public func endpoint<Content: Decodable & Sendable>(as type: Content.Type = Content.self) throws(APIError) -> Endpoint<Content> {
        let define = try define()
        var timeouts: HTTPRequest.Timeouts?
        if let total = define.timeout {
            timeouts = HTTPRequest.Timeouts()
            timeouts?.total = total
        }
        let cachePolicy = define.cache.map { cache in
            var policy = ResponseCache.Policy.lifetime(cache.lifetime)
            policy.staleWhileRevalidate = cache.staleWhileRevalidate
            policy.followsCacheControl = cache.followsCacheControl
            return policy
        }
        let defaults = define.parameters
        var reform: (@Sendable (Parameters) -> Parameters)?
        if !defaults.isEmpty {
            reform = { @Sendable parameters in defaults.merging(parameters) { _, call in call } }
        }
        let validateParameters: @Sendable (Parameters) throws -> Void = { parameters in
            if let missing = define.placeholders.first(where: { parameters[$0] == nil }) {
                throw UnfilledPlaceholder(define: define, placeholder: missing)
            }
        }
        let shape = define.response.shape
        var validateResponse: (@Sendable (APIResponse<Content>) throws -> Void)?
        if shape != .any {
            // A typed content is checked by its decoding (a list does not decode into an
            // object's type); JSON content is checked here, as decoded, without a second parse.
            validateResponse = { @Sendable response in
                if let found = response.content as? JSONValue { try Self.check(shape, of: found, define: define) }
            }
        }
        var dataField = define.response.dataField
        if let operation = define.graphQL { dataField = operation.connectionAt.map { "data." + $0 } ?? "data" }
        var endpoint = Endpoint<Content>(
            service: define.service, path: define.path, method: define.method, parameterPlacements: define.parameterPlacements, headers: define.headers,
            timeouts: timeouts,
            envelope: dataField.map { ResponseEnvelope(dataField: $0) }, cachePolicy: cachePolicy, retryPolicy: define.retryPolicy,
            usesAuthenticator: define.needsAuthorization, reformParameters: reform, validateParameters: validateParameters,
            validateResponse: validateResponse)
        if let operation = define.graphQL {
            endpoint.graphQL = GraphQLOperation(
                kind: operation.kind == .query ? .query : .mutation, document: operation.document, name: operation.operationName,
                serverHonoursIdempotencyKeys: operation.serverHonoursIdempotencyKeys)
        }
        return endpoint
    }

    /// A manager of the define, for the delegate face (`loadData()`, a delegate, load IDs).
    public func manager<Content: Decodable & Sendable>(as type: Content.Type = Content.self) throws(APIError) -> APIManager<Content> {
        APIManager(try endpoint(as: type), proxy: proxy, registry: registry, cache: cache)
    }

    /// Calls the API and decodes its content as `type`.
    ///
    /// - Parameters:
    ///   - parameters: The call's parameters, over the define's.
    ///   - type: The content's type.
    ///   - headers: Headers of this call, over the define's.
    ///   - query: Query items of this call.
    /// - Returns: The response.
    /// - Throws: The load's ``APIError``.
    public func load<Content: Decodable & Sendable>(
        _ parameters: Parameters = [:], as type: Content.Type, headers: HTTPHeaders = HTTPHeaders(), query: [URLQueryItem] = []
    ) async throws(APIError) -> APIResponse<Content> {
        try await manager(as: type).load(parameters, headers: headers, query: query)
    }

    /// Calls the API with a body made from an `Encodable` value and decodes its content as `type`.
    ///
    /// - Parameters:
    ///   - parameters: The call's parameters, over the define's: they fill the path and go in
    ///     the query.
    ///   - body: The body's value.
    ///   - encoding: How it is encoded; the service's by default.
    ///   - type: The content's type.
    ///   - headers: Headers of this call, over the define's.
    ///   - query: Query items of this call.
    /// - Returns: The response.
    /// - Throws: The load's ``APIError``.
    public func load<Content: Decodable & Sendable>(
        _ parameters: Parameters = [:], body: some Encodable & Sendable, encoding: Parameters.BodyEncoding? = nil, as type: Content.Type,
        headers: HTTPHeaders = HTTPHeaders(), query: [URLQueryItem] = []
    ) async throws(APIError) -> APIResponse<Content> {
        try await manager(as: type).load(parameters, body: body, encoding: encoding, headers: headers, query: query)
    }

    /// Calls the API and hands its content over as JSON.
    ///
    /// - Parameters:
    ///   - parameters: The call's parameters, over the define's.
    ///   - headers: Headers of this call, over the define's.
    ///   - query: Query items of this call.
    /// - Returns: The response, its content a ``/AIFServices/JSONValue``.
    /// - Throws: The load's ``APIError``.
    public func load(_ parameters: Parameters = [:], headers: HTTPHeaders = HTTPHeaders(), query: [URLQueryItem] = []) async throws(APIError) -> APIResponse<JSONValue> {
        try await load(parameters, as: JSONValue.self, headers: headers, query: query)
    }

    /// Checks that JSON content (the envelope's, or the body) is what the define's shape says.
    private static func check(_ shape: APIDefine.Response.Shape, of found: JSONValue, define: APIDefine) throws {
        switch (shape, found) {
        case (.any, _), (.object, .object), (.list, .array): return
        default:
            let place = define.response.dataField.map { "at \($0)" } ?? "as the body"
            throw ShapeMismatch(description: "the API \(define.name) expects \(shape == .list ? "a list" : "an object") \(place), and the response has \(Self.kind(of: found))")
        }
    }

    private static func kind(of value: JSONValue) -> String {
        switch value {
        case .object: "an object"
        case .array: "a list"
        case .string: "a string"
        case .number, .integer: "a number"
        case .bool: "a flag"
        case .null: "null"
        }
    }

    /// A define's response of another shape than it says.
    private struct ShapeMismatch: Error, CustomStringConvertible {
        let description: String
    }
}

/// A define's path placeholder that no parameter fills.
struct UnfilledPlaceholder: Error, CustomStringConvertible {
    let define: APIDefine
    let placeholder: String

    var description: String {
        let origin = define.file.isEmpty ? "" : " (\(define.file))"
        return "the API \(define.name)\(origin) has {\(placeholder)} in its path \(define.path), and no parameter fills it"
    }
}

/// The API defined as `name` (see ``/AIFServices/APIDefine``), in the shared registry:
/// `try await api("goods.detail").load(["id": 7], as: Goods.self)`.
///
/// - Parameter name: The define's name.
/// - Returns: The API, looked up when it is called.
public func api(_ name: String) -> DefinedAPI {
    DefinedAPI(name)
}
