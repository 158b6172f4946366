public import Foundation

extension HTTPRequest {
    /// The request that a redirect response asks for, or `nil` when the response is not a
    /// redirect to follow.
    ///
    /// The rules keep what the request means (RFC 9110 §15.4):
    /// - `303 See Other` continues as a `GET` without a body (a `HEAD` stays a `HEAD`);
    /// - `301` and `302` turn only a `POST` into a bodiless `GET`; every other method is kept,
    ///   **with** its body;
    /// - `307` and `308` keep the method and the body;
    /// - when the body is dropped, so are the headers that describe it (`Content-Type`,
    ///   `Content-Length`, `Content-Encoding`, …);
    /// - credentials (`Authorization`, `Proxy-Authorization`, `Cookie`) are not carried to
    ///   another origin (scheme, host and port), nor are the request's own Unix socket and
    ///   client certificate (its ``connection``'s host overrides are);
    /// - only `http` and `https` targets are followed; a `Location` relative to the request is
    ///   resolved against its URL, and a fragment is not sent.
    ///
    /// Other statuses, and redirects without a `Location`, are not followed: the response is
    /// the answer.
    ///
    /// - Parameter response: The response to this request.
    /// - Returns: The next request, or `nil`.
    /// - Throws: ``TransportError`` with ``TransportError/Code-swift.struct/invalidResponse``
    ///   when the `Location` is not a URL this library may follow.
    public func redirected(by response: HTTPResponse) throws(TransportError) -> HTTPRequest? {
        guard Self.isRedirect(response.statusCode), let location = response.headers["Location"] else {
            return nil
        }
        let current = url
        guard let resolved = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: current)?.absoluteURL,
            let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https", resolved.host?.isEmpty == false
        else {
            throw TransportError(
                .invalidResponse, url: self.location.text,
                detail: "the server answered \(response.statusCode) with a Location that is not an http(s) URL: \(Self.shortened(location))"
            )
        }
        var next = self
        next.url = Self.withoutFragment(resolved)
        let keepsMethod: Bool
        switch response.statusCode {
        case 303: keepsMethod = method == .head
        case 301, 302: keepsMethod = method != .post
        default: keepsMethod = true
        }
        if !keepsMethod {
            next.method = method == .head ? .head : .get
            next.body = .empty
            for name in Self.contentHeaderNames { next.headers.remove(name: name) }
        }
        if !Self.sameOrigin(current, next.url) {
            for name in Self.credentialHeaderNames { next.headers.remove(name: name) }
            // The condition is the credential's, which does not go there; nor do the request's
            // socket and client certificate, given for the server first asked.
            next.sendingCondition = nil
            next.connection = connection?.forAnotherOrigin
        }
        return next
    }

    /// Whether two URLs share an origin: scheme, host and port (the scheme's default port when
    /// none is written), compared without regard to case.
    ///
    /// - Parameters:
    ///   - lhs: One URL.
    ///   - rhs: The other.
    /// - Returns: `true` when a browser would treat them as the same origin.
    public static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int?) {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
            return (scheme, url.host?.lowercased() ?? "", port)
        }
        return origin(lhs) == origin(rhs)
    }

    /// Whether a status asks the client to repeat the request elsewhere (checked for every
    /// response, so a switch rather than a set's hashing).
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }
    /// Headers that describe a body, dropped with it.
    static let contentHeaderNames = [
        "Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location", "Content-Digest",
        "Digest", "Transfer-Encoding", "Expect",
    ]
    /// Headers that carry credentials, kept within the origin they were given for.
    static let credentialHeaderNames = ["Authorization", "Proxy-Authorization", "Cookie"]

    private static func withoutFragment(_ url: URL) -> URL {
        guard url.fragment != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.fragment = nil
        return components.url ?? url
    }

    /// A server-supplied value for an error message: at most 200 characters.
    private static func shortened(_ text: String) -> String {
        text.count <= 200 ? text.debugDescription : String(text.prefix(200)).debugDescription + "…"
    }
}
