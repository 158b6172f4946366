import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// The demo shop's short-lived access tokens, and the controls a test or the sample uses to
/// make them expire or their refresh fail.
///
/// | Route | Answer |
/// |---|---|
/// | `POST auth/token` | 200 and a ``TokenGrant`` (a new token; earlier ones stay valid until they expire); 500 while refreshes are made to fail |
/// | `GET account` | 200 and an ``Account`` with `Authorization: Bearer <valid token>`; otherwise 401 `{"code": 4010, "message": "token expired"}` |
/// | `GET account-in-body` | the same, but a refused token is reported as 200 `{"code": 4011, "message": "token expired"}` |
/// | `GET events?count=N&hold=1` | with a valid token, `N` server-sent events (3 by default) 10 ms apart, `price` events whose data is `1`, `2` …; with `hold=1` it then stays open until the client goes; otherwise as `account` |
/// | `GET events-moved?count=N&hold=1` | 307 to `events` with the same `count` and `hold` |
public final class ShopTokens: Sendable {
    private struct State {
        var valid: [String: Date] = [:]
        var issued = 0
        var refreshAttempts = 0
        var failRefreshes = false
        var refuseAll = false
        var issueDelay: Duration = .zero
        var refusedTokens = 0
        var refusedAfterExpiry: [String: Int] = [:]
        var answerDelay: Duration = .zero
        var arrivals: [Arrival] = []
        var eventsFailures = 0
        var eventsRetryAfter: Int?
        var eventRequests = 0
        var eventStreamsLeftByClient = 0
    }

    /// A request that reached the token routes, and when.
    public struct Arrival: Sendable, Hashable {
        /// What came.
        public enum Kind: Sendable, Hashable {
            /// A request to `auth/token`.
            case refresh
            /// A request to `account` with a token that was accepted.
            case accepted
            /// A request to `account` with a token that was refused, and that token (`nil`
            /// for none).
            case refused(token: String?)
            /// The refusal of a request to `account` is being sent (after the delay
            /// ``ShopTokens/delayAnswers(by:)`` asks for).
            case refusalAnswered
        }

        /// What came.
        public let kind: Kind
        /// When it came.
        public let at: ContinuousClock.Instant
    }

    private let state = NIOLockedValueBox(State())
    /// How long a token lives.
    public let lifetime: Duration

    /// Creates the token book.
    ///
    /// - Parameter lifetime: How long each token is valid; 5 minutes by default.
    /// Told after each change of the event stream's counters (``eventRequests``,
    /// ``eventStreamsLeftByClient``), so that a test can await them.
    private let changed: (@Sendable () -> Void)?

    /// Creates the tokens of a shop.
    ///
    /// - Parameters:
    ///   - lifetime: How long an issued token is valid.
    ///   - changed: Told after each change of the event stream's counters; none by default.
    public init(lifetime: Duration = .seconds(300), changed: (@Sendable () -> Void)? = nil) {
        self.lifetime = lifetime
        self.changed = changed
    }

    /// How many tokens were issued.
    public var issued: Int { state.withLockedValue { $0.issued } }
    /// How many requests reached `auth/token`, failed ones included.
    public var refreshAttempts: Int { state.withLockedValue { $0.refreshAttempts } }
    /// How many requests came with a token that was refused.
    public var refusedRequests: Int { state.withLockedValue { $0.refusedTokens } }
    /// How many requests came with `token` after it had been expired by ``expireAll()``.
    public func requests(withExpired token: String) -> Int { state.withLockedValue { $0.refusedAfterExpiry[token] ?? 0 } }

    /// Every request that reached `auth/token` and `account`, in the order they came.
    public var arrivals: [Arrival] { state.withLockedValue { $0.arrivals } }

    /// Makes `account` take this long to answer (whatever its answer): a burst then fills the
    /// client's queue before the first answer comes.
    public func delayAnswers(by delay: Duration) {
        state.withLockedValue { $0.answerDelay = delay }
    }

    /// Makes the next `count` requests to `events` fail with 503 (before their token is looked
    /// at), saying `Retry-After: retryAfter` seconds when given.
    public func failNextEventStreams(_ count: Int, retryAfter: Int? = nil) {
        state.withLockedValue { state in
            state.eventsFailures = count
            state.eventsRetryAfter = retryAfter
        }
    }

    /// How many requests reached `events`.
    public var eventRequests: Int { state.withLockedValue { $0.eventRequests } }

    /// How many event streams ended because the client went before the stream's end.
    public var eventStreamsLeftByClient: Int { state.withLockedValue { $0.eventStreamsLeftByClient } }

    /// Makes every token issued so far invalid at once.
    public func expireAll() {
        state.withLockedValue { state in
            for token in state.valid.keys { state.refusedAfterExpiry[token] = 0 }
            state.valid = [:]
        }
    }

    /// Makes `auth/token` fail (500) or work again.
    public func failRefreshes(_ fail: Bool) {
        state.withLockedValue { $0.failRefreshes = fail }
    }

    /// Makes `account` refuse every token, new ones too (or accept valid ones again).
    public func refuseAll(_ refuse: Bool) {
        state.withLockedValue { $0.refuseAll = refuse }
    }

    /// Makes `auth/token` take this long to answer.
    public func delayIssuing(by delay: Duration) {
        state.withLockedValue { $0.issueDelay = delay }
    }

    func issue() async throws -> TokenGrant? {
        let delay = state.withLockedValue { state in
            state.refreshAttempts += 1
            state.arrivals.append(Arrival(kind: .refresh, at: .now))
            return state.issueDelay
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        let seconds = Int(lifetime.components.seconds)
        return state.withLockedValue { state in
            guard !state.failRefreshes else { return nil }
            state.issued += 1
            let token = "demo-token-\(state.issued)-\(UUID().uuidString.prefix(8))"
            state.valid[token] = Date().addingTimeInterval(TimeInterval(seconds))
            return TokenGrant(accessToken: token, expiresIn: seconds)
        }
    }

    /// Whether `authorization` (the header's value) names a valid token; counts refusals. Takes
    /// the time ``delayAnswers(by:)`` asks for.
    func accepts(_ authorization: String?) async throws -> Bool {
        let token = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        let (accepted, delay) = state.withLockedValue { state in
            if !state.refuseAll, let token, let expiry = state.valid[token], expiry > Date() {
                state.arrivals.append(Arrival(kind: .accepted, at: .now))
                return (true, state.answerDelay)
            }
            state.arrivals.append(Arrival(kind: .refused(token: token), at: .now))
            state.refusedTokens += 1
            if let token, state.refusedAfterExpiry[token] != nil { state.refusedAfterExpiry[token]! += 1 }
            return (false, state.answerDelay)
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        if !accepted { state.withLockedValue { $0.arrivals.append(Arrival(kind: .refusalAnswered, at: .now)) } }
        return accepted
    }

    /// Adds the token routes to the shop's group.
    func addRoutes<Context: RequestContext>(to group: RouterGroup<Context>) {
        group.post("auth/token") { _, _ -> Response in
            guard let grant = try await self.issue() else {
                return try ShopRoutes.json(ShopError(code: 5000, message: "the token service is down"), status: .internalServerError)
            }
            return try ShopRoutes.json(grant)
        }
        group.get("account") { request, _ -> Response in
            guard try await self.accepts(request.headers[.authorization]) else {
                var response = try ShopRoutes.json(ShopError(code: 4010, message: "token expired"), status: .unauthorized)
                response.headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\""
                return response
            }
            return try ShopRoutes.json(Account(user: "demo", tokensIssued: self.issued))
        }
        group.get("events") { request, _ -> Response in
            let (failing, retryAfter) = self.state.withLockedValue { state -> (Bool, Int?) in
                state.eventRequests += 1
                guard state.eventsFailures > 0 else { return (false, nil) }
                state.eventsFailures -= 1
                return (true, state.eventsRetryAfter)
            }
            self.changed?()
            if failing {
                var response = try ShopRoutes.json(ShopError(code: 5030, message: "the event stream is briefly unavailable"), status: .serviceUnavailable)
                if let retryAfter { response.headers[.retryAfter] = "\(retryAfter)" }
                return response
            }
            guard try await self.accepts(request.headers[.authorization]) else {
                return try ShopRoutes.json(ShopError(code: 4010, message: "token expired"), status: .unauthorized)
            }
            let count = max(0, request.uri.queryParameters.get("count", as: Int.self) ?? 3)
            let hold = request.uri.queryParameters.get("hold") == "1"
            return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: ResponseBody { writer in
                do {
                    for number in 0..<count {
                        try await writer.write(ByteBuffer(string: "event: price\ndata: \(number + 1)\n\n"))
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    // Comments, as keep-alives, until the client goes.
                    while hold {
                        try await writer.write(ByteBuffer(string: ": waiting\n\n"))
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    try await writer.finish(nil)
                } catch {
                    self.state.withLockedValue { $0.eventStreamsLeftByClient += 1 }
                    self.changed?()
                    throw error
                }
            })
        }
        group.get("events-moved") { request, _ -> Response in
            var target = "events?count=\(request.uri.queryParameters.get("count", as: Int.self) ?? 3)"
            if request.uri.queryParameters.get("hold") == "1" { target += "&hold=1" }
            return Response(status: .temporaryRedirect, headers: [.location: target])
        }
        group.get("account-in-body") { request, _ -> Response in
            guard try await self.accepts(request.headers[.authorization]) else {
                return try ShopRoutes.json(ShopError(code: 4011, message: "token expired"))
            }
            return try ShopRoutes.json(Account(user: "demo", tokensIssued: self.issued))
        }
    }
}

/// What `auth/token` answers, OAuth-style.
public struct TokenGrant: Codable, Sendable, Hashable {
    /// The token.
    public var accessToken: String
    /// Its lifetime in seconds.
    public var expiresIn: Int

    /// Creates a grant.
    public init(accessToken: String, expiresIn: Int) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
    }
}

/// What `account` answers to a valid token.
public struct Account: Codable, Sendable, Hashable {
    /// The user's name.
    public var user: String
    /// How many tokens the shop had issued when it answered.
    public var tokensIssued: Int

    /// Creates an account.
    public init(user: String, tokensIssued: Int) {
        self.user = user
        self.tokensIssued = tokensIssued
    }
}
