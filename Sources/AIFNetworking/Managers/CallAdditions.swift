import Foundation

/// What one call adds to its manager's endpoint without a new endpoint: headers, query items,
/// and a body made from an `Encodable` value.
struct CallAdditions: Sendable {
    /// Headers over the endpoint's.
    var headers = HTTPHeaders()
    /// Query items after the parameters the query carries.
    var query: [URLQueryItem] = []
    /// The body's value, over the endpoint's ``Endpoint/body``.
    var body: (any Encodable & Sendable)?
    /// How `body` is encoded, over the endpoint's choice.
    var bodyEncoding: Parameters.BodyEncoding?

    /// Nothing added.
    static let none = CallAdditions()

    /// `path` as the cache and the coalescer tell loads apart: with the call's query items.
    func keyPath(_ path: String) -> String {
        guard !query.isEmpty else { return path }
        return path + "?" + query.map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value ?? "") }.joined(separator: "&")
    }
}
