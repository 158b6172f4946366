public import Foundation

extension ServiceRegistry.ResolvedService {
    /// Builds and signs a request to this service in this environment: a request made as a
    /// manager's load makes it, for ``/AIFTransport/HTTPTransport`` or `APIProxy.send(_:for:)`.
    ///
    /// - The URL is the environment's base URL, the API version and the path joined with
    ///   exactly one `/` between parts, whatever slashes each carries; a path that is a full
    ///   `http(s)` URL is used as it is; `{name}` placeholders in the path are filled from
    ///   the parameters (which are then not sent otherwise) and percent-encoded.
    /// - GET, HEAD, DELETE and OPTIONS carry the parameters in the query string; POST, PUT and
    ///   PATCH in the body, as JSON or a form (the service's default or the call's choice); a
    ///   ``Parameters/Placement`` puts one in the path, the query, a header or the body instead.
    /// - In queries and forms, arrays are written `key[]=a&key[]=b` or `key=a&key=b` (the service's
    ///   ``Service/arrayEncoding``, or the call's) and dictionaries `key[sub]=v`; null values are
    ///   left out. A call's own query items come last, as they are.
    /// - Precedence: common parameters < the call's parameters; the service's common headers <
    ///   its headers for the method < the call's headers. A credential goes over all of them, as
    ///   its authenticator places it.
    /// - Signing comes last, on the final request.
    ///
    /// ```swift
    /// let resolved = try ServiceRegistry.shared.resolve("shop")
    /// let request = try resolved.makeRequest(path: "goods/{id}", method: .get, parameters: ["id": 42])
    /// ```
    ///
    /// - Parameters:
    ///   - path: The path under the version (`goods/{id}`), or a full URL.
    ///   - method: The request type.
    ///   - parameters: The call's parameters.
    ///   - headers: The call's own headers.
    ///   - bodyEncoding: Overrides the service's body encoding.
    ///   - arrays: Overrides the service's array encoding.
    ///   - query: Query items of the call's own, after the parameters in the query (an item
    ///     without a value is sent as `name=`).
    ///   - rawBody: A body sent as it is (bytes or a file), with its content type in `headers`
    ///     or `rawBodyContentType`; the parameters then go in the query string, whatever the
    ///     method.
    ///   - rawBodyContentType: The raw body's `Content-Type` when neither `headers` nor the
    ///     service's common headers name one (the type an encoder made the body as).
    ///   - placements: Where some parameters go instead (by parameter name); see
    ///     ``Parameters/Placement``.
    ///   - credential: The credential the request carries, and where (an `Authorization`
    ///     header, or a parameter sent and signed with the others); none by default.
    ///   - signingContext: The signing time and nonce; now and fresh by default.
    /// - Returns: The request, ready for a transport.
    /// - Throws: ``ServiceError`` naming the service and method when something is missing or
    ///   invalid.
    public func makeRequest(
        path: String,
        method: HTTPMethod,
        parameters: Parameters = [:],
        headers: HTTPHeaders = HTTPHeaders(),
        bodyEncoding: Parameters.BodyEncoding? = nil,
        arrays: Parameters.ArrayEncoding? = nil,
        query: [URLQueryItem] = [],
        rawBody: HTTPRequest.Body? = nil,
        rawBodyContentType: String? = nil,
        placements: [String: Parameters.Placement] = [:],
        credential: Authenticator.PlacedCredential? = nil,
        signingContext: SigningContext = .now()
    ) throws(ServiceError) -> HTTPRequest {
        try RequestGenerator().makeRequest(
            for: self, path: path, method: method, parameters: parameters, headers: headers, bodyEncoding: bodyEncoding, arrays: arrays, query: query,
            rawBody: rawBody, rawBodyContentType: rawBodyContentType, placements: placements, credential: credential, signingContext: signingContext)
    }
}
