public import Foundation

extension ResponseCache {
    /// A tier under ``ResponseCache``'s memory that keeps responses across restarts — the
    /// `AIFNetworkingDiskCache` product's `DiskCache`, on SQLite, or a store of your own.
    ///
    /// The cache reads from it on the loading thread when its memory misses, so a read must be
    /// quick (the disk cache's is tens of microseconds); writes must return at once and happen
    /// elsewhere — never on the thread that calls ``save(_:)``, which may be the transport's
    /// completion path. Implementations are used from many threads at once.
    public protocol PersistentStore: Sendable {
        /// The stored response for a key, or `nil`, whatever its age (the cache judges freshness).
        ///
        /// - Parameter key: The key.
        /// - Returns: The response, or `nil` when none is stored or it cannot be read.
        func response(for key: Key) -> StoredResponse?

        /// Stores a response, replacing any under the same key. Returns at once.
        ///
        /// - Parameter response: The response.
        func save(_ response: StoredResponse)

        /// Removes the responses a scope covers. Returns at once; later reads no longer see them.
        ///
        /// - Parameter scope: What to remove.
        func remove(_ scope: Scope)

        /// How much is stored.
        var usage: Usage { get }

        /// Returns once every write accepted so far is kept (committed), for a process about to
        /// end: ``APIProxy/shutdown(deadline:)`` calls it on the stores of every cache once its
        /// loads have ended. A store that writes at once has nothing to do, the default.
        func flush()
    }

    /// A response as a persistent store keeps it: what it takes to serve it again and to judge its
    /// age. Request headers, signatures and query strings are never part of it.
    public struct StoredResponse: Sendable, Equatable {
        /// The key it is filed under.
        public var key: Key
        /// The HTTP status.
        public var statusCode: Int
        /// The response headers, without `Set-Cookie`.
        public var headers: HTTPHeaders
        /// The body.
        public var body: Data
        /// The URL it came from, without its query string (where a signature may be).
        public var url: String
        /// When it was received (or last revalidated).
        public var storedAt: Date
        /// When it stops being fresh.
        public var expiresAt: Date
        /// When it stops being of any use: past this, a store may delete it.
        public var keepUntil: Date

        /// Creates a stored response.
        ///
        /// - Parameters:
        ///   - key: The key.
        ///   - statusCode: The status.
        ///   - headers: The response headers.
        ///   - body: The body.
        ///   - url: The URL, without its query string.
        ///   - storedAt: When it was received.
        ///   - expiresAt: When it stops being fresh.
        ///   - keepUntil: When it may be deleted.
        public init(
            key: Key, statusCode: Int, headers: HTTPHeaders, body: Data, url: String, storedAt: Date, expiresAt: Date, keepUntil: Date
        ) {
            self.key = key
            self.statusCode = statusCode
            self.headers = headers
            self.body = body
            self.url = url
            self.storedAt = storedAt
            self.expiresAt = expiresAt
            self.keepUntil = keepUntil
        }

        /// How many bytes it takes: its body, headers and key.
        public var byteCount: Int {
            body.count + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } + key.storageKey.utf8.count + url.utf8.count
        }

        /// `Set-Cookie` is the server handing this client a secret; the stored copy leaves it out.
        static func storableHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
            guard headers.contains("Set-Cookie") else { return headers }
            var kept = headers
            kept.remove(name: "Set-Cookie")
            return kept
        }

        /// The URL without its query string or user information.
        static func storableURL(_ url: URL) -> String {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "" }
            components.query = nil
            components.fragment = nil
            components.user = nil
            components.password = nil
            return components.string ?? ""
        }
    }

    /// Which cached responses an invalidation covers.
    public enum Scope: Sendable, Hashable {
        /// Everything.
        case all
        /// Every response of a service.
        case service(ServiceName)
        /// Every response of one environment of a service.
        case environment(ServiceName, ServiceEnvironment.Name)
        /// Every response of one method of a service (what one manager loads), any parameters.
        case method(ServiceName, String)

        /// Whether the scope covers a key.
        ///
        /// - Parameter key: The key.
        /// - Returns: `true` when an invalidation of this scope removes the key's response.
        public func covers(_ key: Key) -> Bool {
            switch self {
            case .all: true
            case .service(let service): key.service == service
            case .environment(let service, let environment): key.service == service && key.environment == environment
            case .method(let service, let path): key.service == service && key.path == path
            }
        }
    }

    /// How much a cache tier holds.
    public struct Usage: Sendable, Equatable {
        /// The number of responses.
        public var entries: Int
        /// Their size in bytes.
        public var bytes: Int

        /// Creates a figure.
        ///
        /// - Parameters:
        ///   - entries: The number of responses.
        ///   - bytes: Their size.
        public init(entries: Int, bytes: Int) {
            self.entries = entries
            self.bytes = bytes
        }
    }
}

extension ResponseCache.PersistentStore {
    /// Nothing to wait for: a store that keeps each write as it returns.
    public func flush() {}
}
