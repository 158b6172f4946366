import AIFNetworking
import Foundation

// Everything the sample tells the SDK about the hub: the service, its endpoints, the token.

extension ServiceName {
    static let hub: ServiceName = "hub"
}

/// The hub: production and staging, GitHub's JSON habits, error bodies read as `HubError`, and
/// GitHub's rate limit — a 403 with `Retry-After` — waited out and retried.
struct Hub: Service {
    let name = ServiceName.hub
    let environments: [ServiceEnvironment.Name: ServiceEnvironment]
    var defaultEnvironment: ServiceEnvironment.Name { "production" }
    var decoder: (any ContentDecoder)? { FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase, dateDecodingStrategy: .iso8601) }
    var arrayEncoding: Parameters.ArrayEncoding { .commaSeparated }
    var errorBody: ErrorBodyRule { ErrorBodyRule(type: HubError.self) }
    var retryPolicy: RetryPolicy { RetryPolicy(retryAfterStatusCodes: [403]) }
    func commonHeaders() -> HTTPHeaders { ["Accept": "application/vnd.github+json"] }

    init(production: URL, staging: URL) {
        environments = ["production": ServiceEnvironment(baseURL: production), "staging": ServiceEnvironment(baseURL: staging)]
    }

    /// Registers the hub and its token.
    static func register(production: URL, staging: URL, token: String) {
        ServiceRegistry.shared.register(Hub(production: production, staging: staging))
        ServiceRegistry.shared.setAuthenticator(.bearer(token), for: [.hub])
    }
}

extension Endpoint where Content == Repository {
    /// A repository, asked again each time with `If-None-Match`: unchanged, it costs a 304.
    static let repository = Endpoint(service: .hub, path: "repos/{owner}/{repo}", cachePolicy: .lifetime(.zero))
}

extension Endpoint where Content == [Issue] {
    /// A repository's issues: bare arrays, paged by `Link` (see `Paging.Settings.hub`).
    static let issues = Endpoint(service: .hub, path: "repos/{owner}/{repo}/issues")
}

extension Endpoint where Content == Issue {
    /// Opens an issue; the body is an `IssueDraft` given at the call.
    static let openIssue = Endpoint(service: .hub, path: "repos/{owner}/{repo}/issues", method: .post)
}

extension Endpoint where Content == SearchResult {
    /// Searches issues; limited to one search a second.
    static let searchIssues = Endpoint(service: .hub, path: "search/issues")
}

extension Endpoint where Content == [ContributorStats] {
    /// Statistics the hub is slow to compute.
    static let contributorStats = Endpoint(service: .hub, path: "repos/{owner}/{repo}/stats/contributors")
}

extension Paging.Settings {
    /// The hub's listings: 50 asked (the hub gives 30 at most), the next page where `Link` says.
    static let hub = Paging.Settings(style: .link, size: 50, sizeParameter: "per_page")
}

/// The repository every call of the sample is about.
let cups: Parameters = ["owner": "acme", "repo": "cups"]
