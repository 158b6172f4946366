package import Foundation

extension RequestGenerator {
    /// A redirect's next hop, ready to send: its old signature removed, then — when it stays
    /// within the first request's origin — signed afresh with a fresh time and nonce (the
    /// environment's clock correction applied).
    ///
    /// A signature covers the exact URL, so it cannot be carried to a redirect's target. A hop
    /// to another origin goes without any signature: a signature names no host, so one made
    /// for another origin could be replayed against this service.
    ///
    /// - Parameters:
    ///   - hop: The next hop, as ``/AIFTransport/HTTPRequest/redirected(by:)`` made it.
    ///   - original: The load's first request.
    ///   - resolved: The service and environment it was made for.
    ///   - date: The time to sign with, before the clock correction: the load's clock's now.
    /// - Returns: The hop to send.
    /// - Throws: ``ServiceError`` when the hop cannot be signed.
    package func signedAgain(
        _ hop: HTTPRequest, after original: HTTPRequest, for resolved: ServiceRegistry.ResolvedService, at date: Date
    ) throws(ServiceError) -> HTTPRequest {
        var next = hop
        let items = PercentEncoding.queryItems(of: hop.url)
        if items.contains(where: { Self.signatureQueryFields.contains($0.name) }) {
            next.url = PercentEncoding.url(hop.url, replacingQueryWith: items.filter { !Self.signatureQueryFields.contains($0.name) })
        }
        for name in Self.signatureHeaderNames {
            next.headers.remove(name: name)
        }
        guard HTTPRequest.sameOrigin(original.url, next.url) else { return next }
        return try sign(next, for: resolved, context: .at(date, clockOffset: resolved.clockSkew.offset))
    }

    /// The query fields the built-in signers add.
    static let signatureQueryFields: Set<String> = ["api_key", "timestamp", "nonce", "sign"]
    /// The headers the built-in signers add.
    static let signatureHeaderNames = ["X-API-Key", "X-Timestamp", "X-Nonce", "X-Signature", "Signature", "Signature-Input", "Content-Digest"]
}

extension ServiceRegistry.ClockSkew: ResponseObserver {
    /// Learns from the response's `Date` header, received now.
    package func record(_ response: HTTPResponse) {
        record(response, receivedAt: Date())
    }
}
