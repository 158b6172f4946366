import Foundation

extension RequestGenerator {
    /// Sends a generated request and follows redirects itself, signing every hop afresh.
    ///
    /// A signature covers the exact URL, so a redirect followed inside the transport would
    /// resend a signature made for the old URL. Requests signed by a service therefore go out
    /// with the transport's redirect following off, and this method follows: `303` (and `301`/
    /// `302` after anything but GET or HEAD) continues as a GET without a body, `307`/`308`
    /// keep the method and body; the old signature fields are removed and the request is
    /// signed again with a fresh time and nonce. Credentials in `Authorization` and `Cookie`
    /// are not carried to another origin.
    ///
    /// - Parameters:
    ///   - request: A request from ``makeRequest(for:methodName:method:parameters:headers:bodyEncoding:rawBody:signingContext:)``.
    ///   - resolved: The service and environment it was made for.
    ///   - transport: Where to send it.
    ///   - maxRedirects: How many redirects to follow; 10 by default.
    ///   - clockSkew: Corrects the time of re-signed hops, and learns from every response.
    /// - Returns: The final response.
    /// - Throws: ``TransportError`` from the transport (``TransportError/Code-swift.struct/tooManyRedirects``
    ///   past the limit), or ``ServiceError`` when a hop cannot be signed.
    public func send(
        _ request: HTTPRequest,
        for resolved: ResolvedService,
        through transport: any HTTPTransport,
        maxRedirects: Int = 10,
        clockSkew: ClockSkew? = nil
    ) async throws -> HTTPResponse {
        var current = request
        let signed = resolved.environment.credentials != nil && resolved.service.signer != nil
        if signed { current.redirects = .never }
        var redirects = 0
        while true {
            let response = try await transport.send(current, progress: nil)
            clockSkew?.record(response)
            guard signed, let next = try nextHop(after: response, from: current, redirects: &redirects, maxRedirects: maxRedirects, resolved: resolved, clockSkew: clockSkew) else {
                return response
            }
            current = next
        }
    }

    /// The re-signed request a redirect asks for, or `nil` when `response` is not one to follow.
    /// Not part of the async loop above, whose frame would otherwise hold its temporaries.
    @inline(never)
    func nextHop(
        after response: HTTPResponse, from current: HTTPRequest, redirects: inout Int, maxRedirects: Int, resolved: ResolvedService, clockSkew: ClockSkew?
    ) throws -> HTTPRequest? {
        switch response.statusCode {
        case 301, 302, 303, 307, 308: break
        default: return nil
        }
        guard let location = response.headers["Location"], let target = URL(string: location, relativeTo: current.url)?.absoluteURL else { return nil }
        redirects += 1
        guard redirects <= maxRedirects else {
            throw TransportError(.tooManyRedirects, url: current.location.text, detail: "more than \(maxRedirects) redirects")
        }
        return try redirected(current, to: target, status: response.statusCode, resolved: resolved, clockSkew: clockSkew)
    }

    private func redirected(
        _ request: HTTPRequest, to target: URL, status: Int, resolved: ResolvedService, clockSkew: ClockSkew?
    ) throws(ServiceError) -> HTTPRequest {
        var next = request
        let keepsMethod = status == 307 || status == 308 || ((status == 301 || status == 302) && (request.method == .get || request.method == .head))
        if !keepsMethod {
            next.method = request.method == .head ? .head : .get
            next.body = .empty
            next.headers.remove(name: "Content-Type")
        }
        let signatureFields: Set<String> = ["api_key", "timestamp", "nonce", "sign"]
        next.url = PercentEncoding.url(target, replacingQueryWith: PercentEncoding.queryItems(of: target).filter { !signatureFields.contains($0.name) })
        for name in ["X-API-Key", "X-Timestamp", "X-Nonce", "X-Signature", "Signature", "Signature-Input", "Content-Digest"] {
            next.headers.remove(name: name)
        }
        let sameOrigin = target.scheme?.lowercased() == request.url.scheme?.lowercased()
            && target.host?.lowercased() == request.url.host?.lowercased() && target.port == request.url.port
        if !sameOrigin {
            next.headers.remove(name: "Authorization")
            next.headers.remove(name: "Cookie")
        }
        return try sign(next, for: resolved, context: clockSkew?.context() ?? .now())
    }
}
