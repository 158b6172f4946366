import Foundation

/// Turns (service, environment, method name, request type, parameters) into a signed
/// ``HTTPRequest``.
///
/// - The URL is the environment's base URL, the API version and the method name joined with
///   exactly one `/` between parts, whatever slashes each carries; a method name that is a full
///   `http(s)` URL is used as it is; `{name}` placeholders in the method name are filled from
///   the parameters (which are then not sent otherwise) and percent-encoded.
/// - GET, HEAD, DELETE and OPTIONS carry the parameters in the query string; POST, PUT and
///   PATCH in the body, as JSON or a form (the service's default or the call's choice).
/// - In queries and forms, arrays are written `key[]=a&key[]=b` or `key=a&key=b` (the service's
///   ``Service/arrayEncoding``) and dictionaries `key[sub]=v`; null values are left out.
/// - Precedence: common parameters < the call's parameters; the service's common headers <
///   its headers for the method < the call's headers.
/// - Signing comes last, on the final request.
public struct RequestGenerator: Sendable {
    /// Creates a generator.
    public init() {}

    /// Builds and signs a request.
    ///
    /// - Parameters:
    ///   - resolved: The service and the environment to use.
    ///   - methodName: The path under the version (`goods/{id}`), or a full URL.
    ///   - method: The request type.
    ///   - parameters: The call's parameters.
    ///   - headers: The call's own headers.
    ///   - bodyEncoding: Overrides the service's body encoding.
    ///   - rawBody: A body sent as it is (bytes or a file), with its content type in `headers`;
    ///     the parameters then go in the query string, whatever the method.
    ///   - signingContext: The signing time and nonce; now and fresh by default.
    /// - Returns: The request, ready for a transport.
    /// - Throws: ``ServiceError`` naming the service and method when something is missing or
    ///   invalid.
    public func makeRequest(
        for resolved: ResolvedService,
        methodName: String,
        method: HTTPMethod,
        parameters: Parameters = [:],
        headers: HTTPHeaders = HTTPHeaders(),
        bodyEncoding: BodyEncoding? = nil,
        rawBody: HTTPRequest.Body? = nil,
        signingContext: SigningContext = .now()
    ) throws(ServiceError) -> HTTPRequest {
        let service = resolved.service
        var parameters = service.commonParameters().merging(parameters) { _, call in call }
        let path = try fillPlaceholders(in: methodName, from: &parameters, service: service.name)
        var url = try makeURL(path: path, originalMethodName: methodName, resolved: resolved)

        var request = HTTPRequest(method: method, url: url)
        request.headers = service.commonHeaders().merging(service.extraHeaders(forMethod: methodName)).merging(headers)
        request.timeouts = service.timeouts

        let flatten = { (parameters: Parameters) in Self.flatten(parameters, arrays: service.arrayEncoding) }
        if let rawBody {
            request.body = rawBody
            if !parameters.isEmpty {
                url = PercentEncoding.url(url, replacingQueryWith: PercentEncoding.queryItems(of: url) + flatten(parameters))
                request.url = url
            }
        } else if method == .post || method == .put || method == .patch {
            switch bodyEncoding ?? service.bodyEncoding {
            case .json:
                let object = ParameterValue.object(parameters).jsonObject
                guard JSONSerialization.isValidJSONObject(object),
                    let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                else {
                    throw ServiceError.unencodableParameters(service: service.name, methodName: methodName, reason: "JSON cannot hold a NaN or infinite number")
                }
                request.body = .bytes(data)
                if !request.headers.contains("Content-Type") { request.headers.set(name: "Content-Type", value: "application/json") }
            case .form:
                let form = flatten(parameters).map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }.joined(separator: "&")
                request.body = .bytes(Data(form.utf8))
                if !request.headers.contains("Content-Type") {
                    request.headers.set(name: "Content-Type", value: "application/x-www-form-urlencoded")
                }
            }
        } else if !parameters.isEmpty {
            url = PercentEncoding.url(url, replacingQueryWith: PercentEncoding.queryItems(of: url) + flatten(parameters))
            request.url = url
        }

        return try sign(request, for: resolved, context: signingContext)
    }

    /// Signs with the service's signer and the environment's keys (unchanged when either is
    /// missing); AIF-HMAC covers all parameters or only its own fields, as the environment says.
    func sign(_ request: HTTPRequest, for resolved: ResolvedService, context: SigningContext) throws(ServiceError) -> HTTPRequest {
        guard let credentials = resolved.environment.credentials, var signer = resolved.service.signer else { return request }
        if var hmac = signer as? AIFHMACSigner {
            hmac.coverage = resolved.environment.signsAllParameters ? .allParameters : .signatureFieldsOnly
            signer = hmac
        }
        do {
            return try signer.sign(request, credentials: credentials, context: context)
        } catch {
            throw ServiceError.signingFailed(service: resolved.service.name, error)
        }
    }

    /// Replaces `{name}` with the parameter `name`, percent-encoded, and removes it from the
    /// parameters.
    private func fillPlaceholders(in methodName: String, from parameters: inout Parameters, service: ServiceName) throws(ServiceError) -> String {
        var result = ""
        var rest = methodName[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            guard let value = parameters[name]?.textValue else {
                throw ServiceError.missingPathParameter(name, service: service, methodName: methodName)
            }
            parameters[name] = nil
            result += PercentEncoding.encode(value)
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    private func makeURL(path: String, originalMethodName: String, resolved: ResolvedService) throws(ServiceError) -> URL {
        let name = resolved.service.name
        if let custom = resolved.service.url(for: path, in: resolved.environment) { return custom }
        let lowered = path.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let url = URL(string: path) else {
                throw ServiceError.invalidURL(service: name, methodName: originalMethodName, reason: "\"\(path)\" is not a valid URL")
            }
            return url
        }
        let (pathPart, query) = path.firstIndex(of: "?").map { (String(path[..<$0]), String(path[path.index(after: $0)...])) } ?? (path, "")
        var base = resolved.environment.baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let segments = [resolved.environment.apiVersion[...], pathPart[...]].map(Self.trimmingSlashes).filter { !$0.isEmpty }
        var text = ([base[...]] + segments).joined(separator: "/")
        if !query.isEmpty { text += "?" + query }
        guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw ServiceError.invalidURL(service: name, methodName: originalMethodName, reason: "\"\(text)\" is not a valid URL")
        }
        return url
    }

    /// `text` without leading and trailing `/`.
    private static func trimmingSlashes(_ text: Substring) -> Substring {
        guard let first = text.firstIndex(where: { $0 != "/" }), let last = text.lastIndex(where: { $0 != "/" }) else { return "" }
        return text[first...last]
    }

    /// Flattens nested parameters into name/value pairs, sorted by name for a stable order.
    static func flatten(_ parameters: Parameters, arrays: ArrayEncoding) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        func add(_ name: String, _ value: ParameterValue) {
            switch value {
            case .null:
                break
            case .array(let values):
                for element in values { add(arrays == .brackets ? name + "[]" : name, element) }
            case .object(let values):
                for key in values.keys.sorted() { add(name + "[" + key + "]", values[key]!) }
            default:
                if let text = value.textValue { pairs.append((name, text)) }
            }
        }
        for key in parameters.keys.sorted() { add(key, parameters[key]!) }
        return pairs
    }
}
