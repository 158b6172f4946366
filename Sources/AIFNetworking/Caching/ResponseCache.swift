import Foundation

/// What a cached response is filed under: the service, its environment, the request type, the
/// method name and the parameters as the caller gave them (reformed, before the service's
/// common parameters and before signing — a signature, nonce or timestamp would make every
/// key unique).
public struct CacheKey: Sendable, Hashable, CustomStringConvertible {
    /// The service's name.
    public let service: ServiceName
    /// The environment the response came from.
    public let environment: EnvironmentName
    /// The request type.
    public let method: HTTPMethod
    /// The method name, as the manager declares it (`goods/{id}`).
    public let methodName: String
    /// The parameters, sorted and percent-encoded: `id=7&page=2`.
    public let parameters: String

    /// Creates a key.
    ///
    /// - Parameters:
    ///   - service: The service's name.
    ///   - environment: The environment.
    ///   - method: The request type.
    ///   - methodName: The method name.
    ///   - parameters: The parameters; their order does not matter.
    public init(service: ServiceName, environment: EnvironmentName, method: HTTPMethod, methodName: String, parameters: Parameters) {
        self.service = service
        self.environment = environment
        self.method = method
        self.methodName = methodName
        self.parameters = RequestGenerator.flatten(parameters, arrays: .brackets)
            .map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }
            .joined(separator: "&")
    }

    /// `shop/online GET goods?page=2`.
    public var description: String {
        "\(service)/\(environment) \(method) \(methodName)" + (parameters.isEmpty ? "" : "?" + parameters)
    }
}

/// An in-memory cache of validated responses with a lifetime per entry and a capacity, least
/// recently used entries evicted first.
///
/// Managers write to it only after a response has passed validation, and never from a response
/// that came from it. It is safe to use from any thread.
public final class ResponseCache: Sendable {
    /// The cache managers use unless given another: 1,000 entries.
    public static let shared = ResponseCache()

    /// One cached response.
    public struct Entry: Sendable {
        /// The response as received.
        public let response: HTTPResponse
        /// The request that fetched it.
        public let request: HTTPRequest
        /// The decoded content, kept so a hit needs no decoding.
        public let content: any Sendable
        /// When it stops being served.
        public let expires: ContinuousClock.Instant
    }

    /// How many entries it keeps at most.
    public let capacity: Int
    private let now: @Sendable () -> ContinuousClock.Instant
    private let storage: Locked<LRUStorage<CacheKey, Entry>>

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - capacity: How many entries to keep at most; 1,000 by default.
    ///   - now: The clock lifetimes are measured on; the continuous clock by default (tests
    ///     pass one they can move).
    public init(capacity: Int = 1000, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.capacity = max(1, capacity)
        self.now = now
        self.storage = Locked(LRUStorage(capacity: max(1, capacity)))
    }

    /// The number of entries, expired ones included until they are looked up or evicted.
    public var count: Int { storage.withLock { $0.count } }

    /// The live entry for a key, or `nil`; an expired entry is removed.
    ///
    /// - Parameter key: The key.
    /// - Returns: The entry, now the most recently used.
    public func entry(for key: CacheKey) -> Entry? {
        let instant = now()
        return storage.withLock { storage in
            guard let entry = storage.value(for: key) else { return nil }
            guard entry.expires > instant else {
                storage.removeValue(for: key)
                return nil
            }
            return entry
        }
    }

    /// Stores a response for `lifetime`.
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - request: The request that fetched it.
    ///   - content: Its decoded content.
    ///   - key: The key.
    ///   - lifetime: How long to serve it.
    public func store(_ response: HTTPResponse, request: HTTPRequest, content: any Sendable, for key: CacheKey, lifetime: Duration) {
        guard lifetime > .zero else { return }
        let entry = Entry(response: response, request: request, content: content, expires: now() + lifetime)
        storage.withLock { _ = $0.set(entry, for: key) }
    }

    /// Forgets the responses of one method of a service (what one manager loads).
    ///
    /// - Parameters:
    ///   - service: The service.
    ///   - methodName: The method name.
    public func removeAll(service: ServiceName, methodName: String) {
        storage.withLock { $0.removeAll { $0.service == service && $0.methodName == methodName } }
    }

    /// Forgets every response of a service.
    ///
    /// - Parameter service: The service.
    public func removeAll(service: ServiceName) {
        storage.withLock { $0.removeAll { $0.service == service } }
    }

    /// Forgets everything.
    public func removeAll() {
        storage.withLock { $0.removeAll { _ in true } }
    }
}
