import AIFNetworkingTesting
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// The demo hub: a GitHub-like JSON API for one repository, `acme/cups`, with GitHub's habits —
/// a bearer token, snake_case JSON, ISO 8601 dates, bare arrays paged by `Link` headers with a
/// page-size cap, 422 validation errors and 403 rate limits with `Retry-After`.
///
/// | Route | Answer |
/// |---|---|
/// | every route | 401 `{"message": "Bad credentials"}` without `Authorization: Bearer` ``HubRoutes/token`` |
/// | `GET repos/acme/cups` | the repository, with an `ETag` that changes when an issue is opened; 304 to a matching `If-None-Match` |
/// | `GET repos/acme/secret` | 403 `{"message": "Resource not accessible by personal access token"}`, no `Retry-After` |
/// | `GET repos/{owner}/{repo}` (any other) | 404 `{"message": "Not Found"}` |
/// | `GET repos/acme/cups/issues?per_page=&page=&labels=` | a bare JSON array of issues, newest first, at most ``HubRoutes/pageSizeCap`` a page whatever `per_page` asks (30 by default); `labels` is comma-separated and keeps issues carrying every label; a `Link` header with `next` and `last` (and `prev`, `first`) links, absolute, when there is more than one page |
/// | `POST repos/acme/cups/issues` `{"title", "body", "labels"}` | 201 and the issue; 422 `{"message": "Validation Failed", "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}]}` without a title |
/// | `GET search/issues?q=` | issues whose title contains `q` (wrapped: `total_count`, `items`); at most one search a second — another within the second is refused with 403 `{"message": "API rate limit exceeded …"}` and a `Retry-After` of 1 |
/// | `GET search/code?q=&window=` | `{"total_count": 0, …}`, one search per window of `window` seconds (2 by default, at most 3,600): another within it is refused as GitHub's primary rate limit does, 403 `{"message": "API rate limit exceeded …"}` with `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset` (the window's end, in seconds since 1970), no `Retry-After` |
/// | `GET repos/acme/cups/stats/contributors?ms=` | `[]` after `ms` milliseconds (3,000 by default, at most 30,000): statistics slow to compute |
public enum HubRoutes {
    /// The token the hub accepts (a demo value, not a secret).
    public static let token = "hub-demo-token"
    /// The largest page the issues listing answers, whatever `per_page` asks.
    public static let pageSizeCap = 30

    /// The issues an environment starts with, newest first.
    static func seededIssues(_ environment: HubEnvironment) -> [HubIssue] {
        let count = environment == .production ? 45 : 5
        let labelSets = [["bug"], ["question"], ["bug", "question"], ["enhancement"], []]
        let titles = ["Cups arrive chipped", "Which glaze is food-safe?", "Handle too hot to hold", "Offer a 12 oz size", "Typo on the box"]
        let start = Date(timeIntervalSince1970: 1_767_225_600)   // 2026-01-01
        return (1...count).reversed().map { number in
            HubIssue(
                number: number, title: "\(titles[(number - 1) % titles.count]) (\(number))", body: nil, state: "open",
                labels: labelSets[(number - 1) % labelSets.count].map(HubIssue.Label.init), user: HubIssue.User(login: "reporter\(number % 7)"),
                createdAt: start.addingTimeInterval(Double(number) * 86_400))
        }
    }

    private struct Repository {
        var issues: [HubIssue]
        var version = 1
        var lastSearch: ContinuousClock.Instant?
        /// When the code-search window that is open ends, in seconds since 1970.
        var codeSearchWindowEnd: TimeInterval?
    }

    /// Adds the hub's routes at the router's root.
    ///
    /// - Parameters:
    ///   - router: The router to add to.
    ///   - environment: Which copy of the repository to serve.
    public static func add<Context: RequestContext>(to router: Router<Context>, environment: HubEnvironment) {
        let repository = NIOLockedValueBox(Repository(issues: seededIssues(environment)))
        let group = router.group()
        group.add(middleware: BearerTokenMiddleware<Context>())

        group.get("repos/:owner/:repo") { request, context -> Response in
            switch (context.parameters.get("owner"), context.parameters.get("repo")) {
            case ("acme", "cups"): break
            case ("acme", "secret"): return try error("Resource not accessible by personal access token", status: .forbidden)
            default: return try error("Not Found", status: .notFound)
            }
            let (issues, version) = repository.withLockedValue { ($0.issues, $0.version) }
            let tag = "\"cups-\(environment.rawValue)-\(version)\""
            if let tags = request.headers[.ifNoneMatch], tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag }) {
                return Response(status: .notModified, headers: [.eTag: tag])
            }
            let description = environment == .production ? "Cups, mugs and saucers" : "Cups, mugs and saucers (staging copy)"
            var response = try json(HubRepository(
                id: 1296269, fullName: "acme/cups", description: description, stargazersCount: 1_280, openIssuesCount: issues.count,
                pushedAt: issues.first?.createdAt ?? Date(timeIntervalSince1970: 1_767_225_600)))
            response.headers[.eTag] = tag
            return response
        }
        group.get("repos/:owner/:repo/issues") { request, context -> Response in
            guard isCups(context) else { return try error("Not Found", status: .notFound) }
            let query = request.uri.queryParameters
            let size = min(pageSizeCap, max(1, query.get("per_page", as: Int.self) ?? 30))
            let page = max(1, query.get("page", as: Int.self) ?? 1)
            let wanted = (query.get("labels") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let issues = repository.withLockedValue { $0.issues }.filter { issue in
                wanted.allSatisfy { label in issue.labels.contains { $0.name == label } }
            }
            let pages = max(1, (issues.count + size - 1) / size)
            let start = min(issues.count, (page - 1) * size)
            var response = try json(Array(issues[start..<min(issues.count, start + size)]))
            if pages > 1 {
                response.headers[HTTPField.Name("Link")!] = links(for: request, page: page, of: pages, size: size)
            }
            return response
        }
        group.post("repos/:owner/:repo/issues") { request, context -> Response in
            guard isCups(context) else { return try error("Not Found", status: .notFound) }
            let buffer = try await request.body.collect(upTo: 1 << 20)
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            guard let draft = try? decoder.decode(HubIssueDraft.self, from: Data(buffer.readableBytesView)) else {
                return try error("Problems parsing JSON", status: .badRequest)
            }
            guard let title = draft.title, !title.trimmingCharacters(in: .whitespaces).isEmpty else {
                let missing = HubErrorBody.FieldError(resource: "Issue", field: "title", code: "missing_field")
                return try json(HubErrorBody(message: "Validation Failed", errors: [missing], documentationUrl: documentation), status: .unprocessableContent)
            }
            let issue = repository.withLockedValue { repository in
                let issue = HubIssue(
                    number: (repository.issues.map(\.number).max() ?? 0) + 1, title: title, body: draft.body, state: "open",
                    labels: (draft.labels ?? []).map(HubIssue.Label.init), user: HubIssue.User(login: "demo-user"), createdAt: Date())
                repository.issues.insert(issue, at: 0)
                repository.version += 1
                return issue
            }
            return try json(issue, status: .created)
        }
        group.get("search/issues") { request, _ -> Response in
            let now = ContinuousClock.now
            let limited = repository.withLockedValue { repository in
                if let last = repository.lastSearch, now - last < .seconds(1) { return true }
                repository.lastSearch = now
                return false
            }
            if limited {
                var refused = try error("API rate limit exceeded for user ID 1. Please wait a moment and try again.", status: .forbidden)
                refused.headers[.retryAfter] = "1"
                return refused
            }
            let text = (request.uri.queryParameters.get("q") ?? "").lowercased()
            let found = repository.withLockedValue { $0.issues }.filter { text.isEmpty || $0.title.lowercased().contains(text) }
            return try json(HubSearchResult(totalCount: found.count, incompleteResults: false, items: Array(found.prefix(pageSizeCap))))
        }
        group.get("search/code") { request, _ -> Response in
            let window = TimeInterval(min(3_600, max(1, request.uri.queryParameters.get("window", as: Int.self) ?? 2)))
            let now = Date().timeIntervalSince1970
            let reset = repository.withLockedValue { repository -> TimeInterval? in
                if let end = repository.codeSearchWindowEnd, now < end { return end }
                repository.codeSearchWindowEnd = (now + window).rounded(.up)
                return nil
            }
            var headers: HTTPFields = [:]
            headers[HTTPField.Name("X-RateLimit-Limit")!] = "1"
            headers[HTTPField.Name("X-RateLimit-Remaining")!] = "0"
            headers[HTTPField.Name("X-RateLimit-Resource")!] = "code_search"
            if let reset {
                var refused = try error("API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.", status: .forbidden)
                refused.headers.append(contentsOf: headers)
                refused.headers[HTTPField.Name("X-RateLimit-Reset")!] = String(Int(reset))
                return refused
            }
            var found = try json(HubSearchResult(totalCount: 0, incompleteResults: false, items: []))
            found.headers.append(contentsOf: headers)
            return found
        }
        group.get("repos/:owner/:repo/stats/contributors") { request, context -> Response in
            guard isCups(context) else { return try error("Not Found", status: .notFound) }
            let milliseconds = min(30_000, max(0, request.uri.queryParameters.get("ms", as: Int.self) ?? 3_000))
            try await Task.sleep(for: .milliseconds(milliseconds))
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "[]")))
        }
    }

    static let documentation = "https://docs.example/rest"

    /// Whether a route's `owner` and `repo` name the one repository there is. (The routes take
    /// both as parameters: a literal `repos/acme/cups/issues` beside `repos/:owner/:repo` would
    /// leave `repos/acme/cups` itself unrouted.)
    static func isCups(_ context: some RequestContext) -> Bool {
        context.parameters.get("owner") == "acme" && context.parameters.get("repo") == "cups"
    }

    /// The `Link` field of a page: `next` and `last` while pages follow, `prev` and `first`
    /// after the first, absolute URLs carrying the request's other query items.
    static func links(for request: Request, page: Int, of pages: Int, size: Int) -> String {
        let authority = request.head.authority ?? "127.0.0.1"
        let others = request.uri.queryParameters.filter { $0.key != "page" && $0.key != "per_page" }
        func url(_ page: Int) -> String {
            var components = URLComponents()
            components.queryItems = others.map { URLQueryItem(name: String($0.key), value: String($0.value)) }
                + [URLQueryItem(name: "per_page", value: String(size)), URLQueryItem(name: "page", value: String(page))]
            return "<http://\(authority)\(request.uri.path)?\(components.percentEncodedQuery ?? "")>"
        }
        var links: [String] = []
        if page < pages { links += ["\(url(page + 1)); rel=\"next\"", "\(url(pages)); rel=\"last\""] }
        if page > 1 { links += ["\(url(page - 1)); rel=\"prev\"", "\(url(1)); rel=\"first\""] }
        return links.joined(separator: ", ")
    }

    static func error(_ message: String, status: HTTPResponse.Status) throws -> Response {
        try json(HubErrorBody(message: message, errors: nil, documentationUrl: documentation), status: status)
    }

    static func json<Value: Encodable>(_ value: Value, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Refuses a request without the hub's bearer token: 401 and GitHub's message.
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.headers[.authorization] == "Bearer \(HubRoutes.token)" else {
            return try HubRoutes.error("Bad credentials", status: .unauthorized)
        }
        return try await next(request, context)
    }
}

/// The demo hub as a running server.
public enum DemoHubServer {
    /// Starts the hub for `environment` on 127.0.0.1, on a port the system picks unless given one.
    ///
    /// - Parameters:
    ///   - environment: Which copy of the repository to serve.
    ///   - port: The port; 0, for any, by default.
    /// - Returns: The running server; call ``LocalServer/stop()`` when done.
    /// - Throws: When the server cannot bind.
    public static func start(environment: HubEnvironment = .production, port: Int = 0) async throws -> LocalServer {
        let router = Router()
        HubRoutes.add(to: router, environment: environment)
        return try await LocalServer.start(router: router, port: port)
    }
}
