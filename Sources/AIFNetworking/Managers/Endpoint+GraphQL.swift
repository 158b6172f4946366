extension Endpoint {
    /// An endpoint that runs a GraphQL query: the load's parameters are its variables, and its
    /// content is decoded from the body's `data`.
    ///
    /// ```swift
    /// extension Endpoint where Content == RepositoryPage {
    ///     static let repositories = Endpoint.graphQLQuery("""
    ///         query($owner: String!, $first: Int!) {
    ///           repositoryOwner(login: $owner) { repositories(first: $first) { nodes { name } } }
    ///         }
    ///         """, service: "github")
    /// }
    ///
    /// let page = try await APIManager(.repositories).load(["owner": "apple", "first": 20]).content
    /// ```
    ///
    /// - A POST (the default) sends `{"query", "operationName", "variables"}` as JSON; a GET
    ///   (for servers that cache queries) sends them in the query, the variables as one JSON
    ///   text. Variable names go as written: the service's encoder does not convert them.
    /// - A body whose `errors` is not empty fails the load as a
    ///   ``APIError/Kind-swift.struct/serviceVeto`` whose ``APIError/serverCode`` is the first
    ///   error's `extensions.code` (`GRAPHQL_ERROR` without one) — so the service's error
    ///   policies can act on it — and whose ``APIError/graphQLErrors(extensions:)`` and
    ///   ``APIError/graphQLData(as:)`` read the errors and any partial data.
    /// - A query is safe to send again: the retry policy repeats it as it repeats a GET, after a
    ///   lost answer too, and no idempotency key is made for it.
    ///
    /// - Parameters:
    ///   - document: The GraphQL document, sent as `query`.
    ///   - name: The operation to run (`operationName`), for a document with several.
    ///   - connectionAt: Where in `data` the content is, as a dotted path of fields
    ///     (`repositoryOwner.repositories`, for a ``Paging/Connection`` paged with
    ///     ``Paging/Settings/relay(size:cursorVariable:sizeVariable:)``); `data` itself by default.
    ///   - service: The service to call.
    ///   - path: The path of its GraphQL endpoint; `graphql` by default.
    ///   - method: POST by default; GET for a query sent in the URL.
    ///   - headers: None by default.
    ///   - timeouts: The service's or the transport's by default.
    ///   - cachePolicy: No caching by default; the key is the document and its variables.
    ///   - retryPolicy: The service's by default.
    ///   - usesAuthenticator: Yes by default.
    ///   - reformParameters: The variables sent as they come by default.
    ///   - validateParameters: Every variable accepted by default.
    ///   - validateResponse: Every response accepted by default.
    /// - Returns: The endpoint.
    public static func graphQLQuery(
        _ document: String,
        name: String? = nil,
        connectionAt: String? = nil,
        service: ServiceName,
        path: String = "graphql",
        method: HTTPMethod = .post,
        headers: HTTPHeaders = HTTPHeaders(),
        timeouts: HTTPRequest.Timeouts? = nil,
        cachePolicy: ResponseCache.Policy? = nil,
        retryPolicy: RetryPolicy? = nil,
        usesAuthenticator: Bool = true,
        reformParameters: (@Sendable (Parameters) -> Parameters)? = nil,
        validateParameters: (@Sendable (Parameters) throws -> Void)? = nil,
        validateResponse: (@Sendable (APIResponse<Content>) throws -> Void)? = nil
    ) -> Endpoint {
        var endpoint = Endpoint(
            service: service, path: path, method: method, headers: headers, timeouts: timeouts,
            envelope: ResponseEnvelope(dataField: connectionAt.map { "data." + $0 } ?? "data"), cachePolicy: cachePolicy, retryPolicy: retryPolicy, usesAuthenticator: usesAuthenticator, reformParameters: reformParameters,
            validateParameters: validateParameters, validateResponse: validateResponse)
        endpoint.graphQL = GraphQLOperation(kind: .query, document: document, name: name)
        return endpoint
    }

    /// An endpoint that runs a GraphQL mutation, POSTed: the load's parameters are its
    /// variables, and its content is decoded from the body's `data`.
    ///
    /// ```swift
    /// let createIssue = Endpoint<CreatedIssue>.graphQLMutation("""
    ///     mutation($input: CreateIssueInput!) { createIssue(input: $input) { issue { number } } }
    ///     """, service: "github")
    /// let created = try await APIManager(createIssue).load(["input": ["repositoryId": id, "title": "Crash on launch"]])
    /// ```
    ///
    /// Its body and its errors are a query's
    /// (``graphQLQuery(_:name:connectionAt:service:path:method:headers:timeouts:cachePolicy:retryPolicy:usesAuthenticator:reformParameters:validateParameters:validateResponse:)``).
    /// A mutation is never sent a second time once the server may have run it — after a lost
    /// answer, a 500, a retried status — and no idempotency key is made for it: most GraphQL
    /// servers ignore the header, and a mutation sent twice runs twice. It is still sent again
    /// when the server cannot have run it (the connection refused, a 429 the policy treats as
    /// unprocessed, a credential refused and renewed). With `serverHonoursIdempotencyKeys`, it
    /// gets the policy's key, and the policy decides as for any POST that carries one.
    ///
    /// - Parameters:
    ///   - document: The GraphQL document, sent as `query`.
    ///   - name: The operation to run (`operationName`), for a document with several.
    ///   - serverHonoursIdempotencyKeys: Whether the server runs the mutation once per
    ///     idempotency key (the retry policy's ``/AIFServices/RetryPolicy/idempotencyKeyHeader``);
    ///     `false` by default.
    ///   - service: The service to call.
    ///   - path: The path of its GraphQL endpoint; `graphql` by default.
    ///   - headers: None by default.
    ///   - timeouts: The service's or the transport's by default.
    ///   - retryPolicy: The service's by default.
    ///   - usesAuthenticator: Yes by default.
    ///   - reformParameters: The variables sent as they come by default.
    ///   - validateParameters: Every variable accepted by default.
    ///   - validateResponse: Every response accepted by default.
    /// - Returns: The endpoint.
    public static func graphQLMutation(
        _ document: String,
        name: String? = nil,
        serverHonoursIdempotencyKeys: Bool = false,
        service: ServiceName,
        path: String = "graphql",
        headers: HTTPHeaders = HTTPHeaders(),
        timeouts: HTTPRequest.Timeouts? = nil,
        retryPolicy: RetryPolicy? = nil,
        usesAuthenticator: Bool = true,
        reformParameters: (@Sendable (Parameters) -> Parameters)? = nil,
        validateParameters: (@Sendable (Parameters) throws -> Void)? = nil,
        validateResponse: (@Sendable (APIResponse<Content>) throws -> Void)? = nil
    ) -> Endpoint {
        var endpoint = Endpoint(
            service: service, path: path, method: .post, headers: headers, timeouts: timeouts, envelope: ResponseEnvelope(dataField: "data"),
            retryPolicy: retryPolicy, usesAuthenticator: usesAuthenticator, reformParameters: reformParameters,
            validateParameters: validateParameters, validateResponse: validateResponse)
        endpoint.graphQL = GraphQLOperation(kind: .mutation, document: document, name: name, serverHonoursIdempotencyKeys: serverHonoursIdempotencyKeys)
        return endpoint
    }
}
