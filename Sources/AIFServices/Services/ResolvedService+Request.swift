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
        let generator = RequestGenerator()
        let service = self.service
        var parameters = parameters
        let common = service.commonParameters()
        if !common.isEmpty { parameters = common.merging(parameters) { _, call in call } }
        var headers = headers
        switch credential?.placement {
        case .authorization(let scheme)?:
            let token = credential!.credential.token
            headers.set(name: "Authorization", value: scheme.isEmpty ? token : "\(scheme) \(token)")
        case .parameter(let name)?:
            // Marked secret here, where it is written, whoever placed it (an authenticator
            // marks its own name when it is made; a credential given directly had no one to).
            HTTPRequest.registerSecretParameter(name)
            parameters[name] = .string(credential!.credential.token)
        case nil:
            break
        }
        let path = try generator.fillPlaceholders(in: path, from: &parameters, service: service.name)
        let target = try generator.makeURL(path: path, originalMethodName: path, resolved: self)

        var request = HTTPRequest(method: method, url: self.environment.baseURL)  // The URL is set below.
        var allHeaders = service.commonHeaders()
        let methodHeaders = service.extraHeaders(forPath: path)
        if !methodHeaders.isEmpty { allHeaders = allHeaders.merging(methodHeaders) }
        if !headers.isEmpty { allHeaders = allHeaders.merging(headers) }
        request.headers = allHeaders
        request.timeouts = service.timeouts
        request.connection = self.environment.connection

        // Where the parameters go: a body of the call's own sends them in the query, a POST,
        // PUT or PATCH in the body, other methods in the query — unless placed elsewhere.
        let bodyTakesParameters = rawBody == nil && (method == .post || method == .put || method == .patch)
        var queryValues: Parameters = [:]
        var bodyValues: Parameters = [:]
        var arraysByName: [String: Parameters.ArrayEncoding] = [:]
        if placements.isEmpty {
            if bodyTakesParameters { bodyValues = parameters } else { queryValues = parameters }
        } else {
            for (name, value) in parameters {
                guard let placement = placements[name] else {
                    if bodyTakesParameters { bodyValues[name] = bodyValues[name] ?? value } else { queryValues[name] = queryValues[name] ?? value }
                    continue
                }
                let key = placement.name ?? name
                if let arrays = placement.arrays { arraysByName[key] = arrays }
                switch placement.location {
                case .path:
                    throw ServiceError.unencodableParameters(service: service.name, path: path, reason: "the parameter \(name) goes in the path, which has no {\(name)}")
                case .query: queryValues[key] = value
                case .body: bodyValues[key] = value
                case .header:
                    guard let text = try RequestGenerator.headerText(of: value, parameter: name, service: service.name, path: path) else { continue }
                    request.headers.set(name: key, value: text)
                }
            }
        }

        // Parameters that go in the query string, after the URL's own query.
        var queryParameters: [(name: String, value: String)] = []
        if let rawBody {
            if let reason = RequestGenerator.unreadableFile(in: rawBody) {
                throw ServiceError.unreadableBodyFile(service: service.name, path: path, reason: reason)
            }
            if let name = bodyValues.keys.sorted().first {
                throw ServiceError.unencodableParameters(service: service.name, path: path, reason: "the parameter \(name) goes in the body, and the call sends a body of its own")
            }
            request.body = rawBody
            if let rawBodyContentType, !request.headers.contains("Content-Type") { request.headers.set(name: "Content-Type", value: rawBodyContentType) }
        } else if !bodyValues.isEmpty || (bodyTakesParameters && placements.isEmpty) {
            // With placements, a body no parameter is left for is not sent at all.
            switch bodyEncoding ?? service.bodyEncoding {
            case .json:
                guard let data = JSONValue.object(bodyValues.dictionary).jsonBody() else {
                    throw ServiceError.unencodableParameters(service: service.name, path: path, reason: "JSON cannot hold a NaN or infinite number")
                }
                request.body = .bytes(data)
                if !request.headers.contains("Content-Type") { request.headers.set(name: "Content-Type", value: "application/json") }
            case .form:
                let form = RequestGenerator.flatten(bodyValues, arrays: arrays ?? service.arrayEncoding, arraysByName: arraysByName)
                    .map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }.joined(separator: "&")
                request.body = .bytes(Data(form.utf8))
                if !request.headers.contains("Content-Type") {
                    request.headers.set(name: "Content-Type", value: "application/x-www-form-urlencoded")
                }
            }
        }
        if !queryValues.isEmpty {
            queryParameters = RequestGenerator.flatten(queryValues, arrays: arrays ?? service.arrayEncoding, arraysByName: arraysByName)
        }

        queryParameters += query.map { ($0.name, $0.value ?? "") }

        // A URL this generator wrote, for a scheme that signs it as text: the signed URL is
        // written as text and not parsed at all.
        if case .text(let text) = target, let credentials = self.environment.credentials, let signer = service.signer,
            let signed = signer.signedURLText(
                method: method, prefix: text.prefix, path: text.path, query: text.query, adding: queryParameters, body: request.body, coveringAllParameters: self.environment.signsAllParameters, credentials: credentials, context: signingContext)
        {
            // Plain text by construction (a checked prefix, then percent-encoded items), so it
            // goes to libcurl unparsed; `request.url` parses it if anyone asks.
            assert(URL(string: signed) != nil, "the signed URL does not parse")
            request.location = .text(signed)
            return request
        }

        var url: URL
        switch target {
        case .url(let parsed): url = parsed
        case .text(let text): url = try generator.parsedURL(text.whole, path: path, service: service.name)
        }
        if !queryParameters.isEmpty {
            url = PercentEncoding.url(url, replacingQueryWith: PercentEncoding.queryItems(of: url) + queryParameters)
        }
        request.url = url
        return try generator.sign(request, for: self, context: signingContext)
    }
}
