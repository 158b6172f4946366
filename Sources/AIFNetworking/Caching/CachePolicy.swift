import Foundation

extension ResponseCache {
    /// How an endpoint's responses are cached: how long one is served, what happens once it is
    /// older, and which HTTP rules apply.
    ///
    /// ```swift
    /// Endpoint<GoodsPage>(service: "shop", path: "goods", cache: ResponseCache.Policy(
    ///     lifetime: .seconds(60),                 // served without asking for a minute
    ///     version: 2,                             // bump to forget what older builds stored
    ///     staleWhileRevalidate: .seconds(3600),   // then at once, while a refresh runs
    ///     offlineFallback: .seconds(86_400 * 7))) // and when the network is gone
    /// ```
    ///
    /// A response is **fresh** for ``lifetime``: loads are answered from the cache and nothing is
    /// sent. Once expired it may still be used:
    /// - within ``staleWhileRevalidate``, a load is answered at once with it (marked
    ///   ``AIFTransport/HTTPResponse/Origin/staleCache(age:)``) and a refresh load follows;
    /// - with an `ETag` or `Last-Modified`, within ``revalidationWindow``, the load sends a
    ///   conditional request, and a `304 Not Modified` answer serves the stored body again
    ///   (``AIFTransport/HTTPResponse/Origin/revalidated``) and starts a new lifetime;
    /// - within ``offlineFallback``, a load that fails for want of a network or by timing out is
    ///   answered with it (``AIFTransport/HTTPResponse/Origin/offlineFallback(age:reason:)``) instead of the error.
    public struct Policy: Sendable, Hashable {
        /// How long a response is served without asking the server.
        public var lifetime: Duration
        /// Bumping it makes the responses stored under older versions unreachable (they are
        /// swept later): for changes the cache cannot see, such as a server's new meaning for a
        /// field. A change of the content type's `Decodable` shape needs no bump: the type's
        /// fingerprint is part of the key.
        public var version: Int
        /// How long past its lifetime a response is still served at once while a refresh load
        /// runs; `nil` (the default) waits for the network instead.
        public var staleWhileRevalidate: Duration?
        /// How old a response may be and still answer a load that failed as
        /// ``APIError/Kind/noNetwork`` or ``APIError/Kind/timeout``; `nil` (the default) delivers
        /// the error.
        public var offlineFallback: Duration?
        /// How long past its lifetime a response with an `ETag` or `Last-Modified` header is kept
        /// to be revalidated with `If-None-Match`/`If-Modified-Since`; a day by default, `nil` to
        /// send unconditional requests.
        public var revalidationWindow: Duration?
        /// Whether the response's `Cache-Control` header has the last word: `no-store` keeps it
        /// out of the cache, `no-cache` stores it already expired (so it is revalidated before
        /// use), `max-age` replaces ``lifetime`` (less the `Age` header), and `private` keeps it in
        /// memory only, never on disk. Off by default: the endpoint's lifetime rules.
        public var followsCacheControl: Bool
        /// Whether responses are written to the cache's persistent store, when it has one; on by
        /// default.
        public var persists: Bool

        /// Creates a policy.
        ///
        /// - Parameters:
        ///   - lifetime: How long a response is served without asking.
        ///   - version: The cache version; 0 by default.
        ///   - staleWhileRevalidate: How long past its lifetime a response is served while it is
        ///     refreshed; `nil` by default.
        ///   - offlineFallback: How old a response may be to answer a load that found no network;
        ///     `nil` by default.
        ///   - revalidationWindow: How long an expired response with validators is kept for
        ///     conditional requests; a day by default.
        ///   - followsCacheControl: Whether `Cache-Control` overrides these rules; off by default.
        ///   - persists: Whether responses reach the persistent store; on by default.
        public init(
            lifetime: Duration,
            version: Int = 0,
            staleWhileRevalidate: Duration? = nil,
            offlineFallback: Duration? = nil,
            revalidationWindow: Duration? = .seconds(86_400),
            followsCacheControl: Bool = false,
            persists: Bool = true
        ) {
            self.lifetime = lifetime
            self.version = version
            self.staleWhileRevalidate = staleWhileRevalidate
            self.offlineFallback = offlineFallback
            self.revalidationWindow = revalidationWindow
            self.followsCacheControl = followsCacheControl
            self.persists = persists
        }

        /// A policy serving responses for `lifetime`, with the defaults for everything else.
        ///
        /// - Parameter lifetime: How long a response is served without asking.
        /// - Returns: The policy.
        public static func lifetime(_ lifetime: Duration) -> ResponseCache.Policy {
            ResponseCache.Policy(lifetime: lifetime)
        }

        /// How a response received now is kept under this policy: `nil` when it must not be
        /// stored.
        func retention(of response: HTTPResponse, at now: Date) -> Retention? {
            var lifetime = lifetime
            var persists = persists
            if followsCacheControl {
                let control = CacheControl(response.headers)
                if control.noStore { return nil }
                if control.isPrivate { persists = false }
                if control.noCache {
                    lifetime = .zero
                } else if let maxAge = control.maxAge {
                    let age = Int(response.headers["Age"]?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
                    lifetime = .seconds(max(0, maxAge - max(0, age)))
                }
            }
            let hasValidators = response.headers.contains("ETag") || response.headers.contains("Last-Modified")
            let windows = [staleWhileRevalidate, offlineFallback, hasValidators ? revalidationWindow : nil].compactMap { $0 }
            let keptAfterExpiry = windows.max() ?? .zero
            guard lifetime > .zero || keptAfterExpiry > .zero else { return nil }
            let expires = now.addingTimeInterval(lifetime.timeInterval)
            return Retention(expires: expires, keepUntil: expires.addingTimeInterval(keptAfterExpiry.timeInterval), persists: persists)
        }

        /// How long a stored response is kept, and where.
        struct Retention: Equatable {
            /// When it stops being fresh.
            var expires: Date
            /// When it stops being of any use (stale serving, fallback, revalidation).
            var keepUntil: Date
            /// Whether it goes to the persistent store.
            var persists: Bool
        }
    }
}
