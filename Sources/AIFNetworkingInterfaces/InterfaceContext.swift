#if Interfaces
/// What a typed interface's generated client shares among its methods: the interface's name,
/// its service, path prefix and headers, and where its calls go. The client's initializer
/// makes one, and each method's ``InterfaceMethod`` from it.
public struct InterfaceContext: Sendable {
    /// The protocol's name (`ShopAPI`), for errors.
    public let interface: String
    /// The service every method calls.
    public let service: ServiceName
    /// Put before every method's path.
    public let pathPrefix: String
    /// Headers every method sends, under the method's own.
    public let headers: HTTPHeaders
    /// Where the service is resolved.
    public let registry: ServiceRegistry
    /// The proxy calls go through.
    public let proxy: APIProxy
    /// The response cache.
    public let cache: ResponseCache

    /// Describes an interface's calls.
    ///
    /// - Parameters:
    ///   - interface: The protocol's name.
    ///   - service: The service every method calls.
    ///   - pathPrefix: Put before every method's path; none by default.
    ///   - headers: Headers every method sends; none by default.
    ///   - registry: Where the service is resolved.
    ///   - proxy: The proxy calls go through.
    ///   - cache: The response cache.
    public init(
        interface: String, service: ServiceName, pathPrefix: String = "", headers: HTTPHeaders = [:], registry: ServiceRegistry, proxy: APIProxy,
        cache: ResponseCache
    ) {
        self.interface = interface
        self.service = service
        self.pathPrefix = pathPrefix
        self.headers = headers
        self.registry = registry
        self.proxy = proxy
        self.cache = cache
    }

    /// One of the interface's methods, as its endpoint.
    ///
    /// - Parameters:
    ///   - name: The method's name with its labels (`goods(id:)`).
    ///   - method: The request type.
    ///   - path: The path, under the interface's prefix.
    ///   - type: The content's type.
    ///   - headers: The method's headers, over the interface's.
    ///   - encoding: How a body is encoded; the service's choice by default.
    ///   - cache: How responses are cached; not at all by default.
    ///   - retry: When a failed call is sent again; the service's policy by default.
    ///   - timeouts: The method's timeouts; the service's or the transport's by default.
    ///   - authenticated: Whether calls carry the service's credential.
    ///   - coalesces: Whether identical calls in flight at once share one transfer.
    ///   - paging: How the method's pages are asked for, for a method that returns them
    ///     (``/AIFNetworking/Paging/Pages``); numbered pages of 20 by default.
    ///   - placements: Where arguments go, by parameter name, when not where the method puts
    ///     parameters: a path placeholder's, a `Query`'s, a `Header`'s. With any, a POST, PUT or
    ///     PATCH whose arguments all go elsewhere sends no body.
    /// - Returns: The method.
    public func method<Content: Decodable & Sendable>(
        _ name: String, _ method: HTTPMethod, _ path: String, as type: Content.Type, headers: HTTPHeaders = [:], encoding: Parameters.BodyEncoding? = nil,
        cache: ResponseCache.Policy? = nil, retry: RetryPolicy? = nil, timeouts: HTTPRequest.Timeouts? = nil, authenticated: Bool = true, coalesces: Bool = false,
        paging: Paging.Settings? = nil, placements: [String: Parameters.Placement] = [:]
    ) -> InterfaceMethod<Content> {
        let merged = self.headers.merging(headers)
        let endpoint = Endpoint<Content>(
            service: service, path: Self.join(pathPrefix, path), method: method, bodyEncoding: encoding, parameterPlacements: placements,
            headers: merged, timeouts: timeouts,
            cachePolicy: cache, coalescesIdenticalRequests: coalesces, retryPolicy: retry, usesAuthenticator: authenticated)
        return InterfaceMethod(name: "\(interface).\(name)", endpoint: endpoint, paging: paging ?? Paging.Settings(), context: self)
    }

    /// `path` under `prefix`, with one slash between them; a full URL as it is.
    static func join(_ prefix: String, _ path: String) -> String {
        if prefix.isEmpty || path.hasPrefix("http://") || path.hasPrefix("https://") { return path }
        let head = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        let tail = path.hasPrefix("/") ? String(path.dropFirst()) : path
        return tail.isEmpty ? head : head + "/" + tail
    }
}

/// One method of a typed interface: its endpoint, and the manager its calls go through — the
/// same pipeline as any manager's (the service's environment, signing, credentials, retries,
/// cache, observers, coalescing). A generated client holds one per method.
public struct InterfaceMethod<Content: Decodable & Sendable>: Sendable {
    /// The method's name, with its interface's (`ShopAPI.goods(id:)`).
    public let name: String
    /// The endpoint it calls.
    public let endpoint: Endpoint<Content>
    /// How its pages are asked for, when it returns them.
    public let paging: Paging.Settings
    private let context: InterfaceContext
    private let manager: APIManager<Content>

    init(name: String, endpoint: Endpoint<Content>, paging: Paging.Settings, context: InterfaceContext) {
        self.name = name
        self.endpoint = endpoint
        self.paging = paging
        self.context = context
        manager = APIManager(endpoint, proxy: context.proxy, registry: context.registry, cache: context.cache)
    }

    /// Calls the method and returns the decoded response.
    ///
    /// - Parameter arguments: The call's arguments.
    /// - Returns: The response.
    /// - Throws: The call's ``APIError``.
    public func response(_ arguments: InterfaceArguments) async throws(APIError) -> APIResponse<Content> {
        try check(arguments)
        return try await manager.load(arguments.call)
    }

    /// Calls the method and returns the decoded content.
    ///
    /// - Parameter arguments: The call's arguments.
    /// - Returns: The content.
    /// - Throws: The call's ``APIError``.
    public func content(_ arguments: InterfaceArguments) async throws(APIError) -> Content {
        try await response(arguments).content
    }

    /// A manager that loads this call: set its delegate and call ``APIManager/loadData()`` — the
    /// delegate face, for screens that hear outcomes through delegates.
    ///
    /// - Parameter arguments: The call's arguments.
    /// - Returns: A manager of its own, which loads these arguments each time `loadData()` is called.
    public func manager(_ arguments: InterfaceArguments) -> APIManager<Content> {
        var call = arguments.call
        call.failure = call.failure.map { "\(name): \($0)" }
        return APIManager(endpoint, calling: call, proxy: context.proxy, registry: context.registry, cache: context.cache)
    }

    /// Fails a call whose arguments could not be turned into parameters, before anything is sent.
    private func check(_ arguments: InterfaceArguments) throws(APIError) {
        guard let failure = arguments.call.failure else { return }
        throw APIError(.invalidParameters, loadID: LoadID(rawValue: 0), service: endpoint.service, path: endpoint.path, message: "\(name): \(failure)")
    }
}

extension InterfaceMethod where Content: Paging.PageContent {
    /// The pages of the listing the arguments ask for, loaded one at a time as they are
    /// iterated, as ``/AIFNetworking/PagedAPIManager/pages(_:)`` loads them: each page carries
    /// the arguments and the method's paging parameters; a page the previous one linked carries
    /// only those the method sends as headers.
    ///
    /// - Parameter arguments: The call's arguments.
    /// - Returns: The pages; nothing is sent until the first is asked for.
    /// - Throws: ``/AIFNetworking/APIError/Kind-swift.struct/invalidParameters`` when an
    ///   argument cannot be sent.
    public func pages(_ arguments: InterfaceArguments) throws(APIError) -> Paging.Pages<Content> {
        try check(arguments)
        return pagedManager(arguments).pages()
    }

    /// A paged manager for the listing the arguments ask for: set its delegate and call
    /// ``/AIFNetworking/PagedAPIManager/loadFirstPage(with:)`` and
    /// ``/AIFNetworking/PagedAPIManager/loadNextPage(with:)`` with no parameters — each page
    /// carries the arguments.
    ///
    /// - Parameter arguments: The call's arguments.
    /// - Returns: A manager of its own.
    public func pagedManager(_ arguments: InterfaceArguments) -> PagedAPIManager<Content> {
        var call = arguments.call
        call.failure = call.failure.map { "\(name): \($0)" }
        return PagedAPIManager(endpoint, paging: paging, calling: call, proxy: context.proxy, registry: context.registry, cache: context.cache)
    }
}

extension InterfaceMethod where Content == NoContent {
    /// Calls a method that answers with no content.
    ///
    /// - Parameter arguments: The call's arguments.
    /// - Throws: The call's ``APIError``.
    public func perform(_ arguments: InterfaceArguments) async throws(APIError) {
        _ = try await response(arguments)
    }

    /// Downloads the response body to the file the arguments name.
    ///
    /// - Parameter arguments: The call's arguments, with a ``/AIFTransport/FileDownload``.
    /// - Returns: The finished file.
    /// - Throws: The call's ``APIError``.
    public func download(_ arguments: InterfaceArguments) async throws(APIError) -> FileDownload.File {
        try check(arguments)
        return try await manager.download(arguments.call)
    }

    /// Streams the response body as it arrives.
    ///
    /// - Parameter arguments: The call's arguments.
    /// - Returns: The status, headers and body stream.
    /// - Throws: The call's ``APIError`` when it failed before its body began.
    public func stream(_ arguments: InterfaceArguments) async throws(APIError) -> HTTPResponse.Streaming {
        try check(arguments)
        return try await manager.stream(arguments.call)
    }
}
#endif
