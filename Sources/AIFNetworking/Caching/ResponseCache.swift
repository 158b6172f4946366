public import Foundation
@_spi(CrossModule) import AIFTransport

/// The cache of validated responses managers answer loads from: a memory tier with a capacity
/// (least recently used entries evicted first) over an optional ``ResponseCache/PersistentStore`` —
/// the `AIFNetworkingDiskCache` product's `DiskCache` — that keeps responses across restarts.
///
/// ```swift
/// ResponseCache.shared.persistentStore = try DiskCache(directory: cachesFolder)
/// ```
///
/// A lookup tries memory, then the persistent store (whose hits are decoded once and kept in
/// memory). Managers write to it only after a response has passed validation, and never from a
/// response that came from it; how long a response is served, and what is done once it is
/// older, is the endpoint's ``ResponseCache/Policy``. It is safe to use from any thread.
public final class ResponseCache: Sendable {
    /// The cache managers use unless given another: 1,000 entries in memory, no persistent
    /// store until one is set.
    public static let shared = ResponseCache()

    /// One cached response.
    public struct Entry: Sendable {
        /// The response as received (with the headers of its latest revalidation).
        public let response: HTTPResponse
        /// The request that fetched it; for a response read from a persistent store, its
        /// method and URL without the query string (stores never keep signatures).
        public let request: HTTPRequest
        /// The decoded content, kept so a memory hit needs no decoding; `nil` for a response
        /// read from a persistent store, decoded by the manager.
        public let content: (any Sendable)?
        /// When it was received or last revalidated.
        public let storedAt: Date
        /// When it stops being fresh.
        public let expiresAt: Date
        /// When it stops being of any use.
        public let keepUntil: Date
        /// Where it was found.
        public let tier: Tier

        /// Whether it is still fresh at `date`.
        public func isFresh(at date: Date) -> Bool { expiresAt > date }

        /// How old it is at `date`.
        public func age(at date: Date) -> Duration {
            .milliseconds(max(0, Int64((date.timeIntervalSince(storedAt) * 1000).rounded())))
        }

        /// The same entry with decoded content, as the memory tier keeps it.
        func holding(_ content: any Sendable) -> Entry {
            Entry(response: response, request: request, content: content, storedAt: storedAt, expiresAt: expiresAt, keepUntil: keepUntil, tier: .memory)
        }
    }

    /// Where an entry was found.
    public enum Tier: Sendable, Hashable {
        /// In memory.
        case memory
        /// In the persistent store.
        case persistent
    }

    /// How many entries the memory tier keeps at most.
    public let capacity: Int
    /// The wall clock lifetimes are measured on, when the cache was given one of its own.
    private let now: (@Sendable () -> Date)?
    private let memory: Locked<MemoryTier>
    private let store = Locked<(any PersistentStore)?>(nil)

    private struct MemoryTier {
        var entries: LRUStorage<Key, Entry>
        var statistics = Statistics()
    }

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - capacity: How many entries to keep in memory at most; 1,000 by default.
    ///   - persistentStore: The tier under memory; none by default.
    ///   - now: The wall clock lifetimes are measured on, for every load; by default none of
    ///     the cache's own: each load's proxy's clock — the system's, or the one a test moves —
    ///     which its retries, waits and credentials read too.
    public init(capacity: Int = 1000, persistentStore: (any PersistentStore)? = nil, now: (@Sendable () -> Date)? = nil) {
        self.capacity = max(1, capacity)
        self.now = now
        memory = Locked(MemoryTier(entries: LRUStorage(capacity: max(1, capacity))))
        store.withLock { $0 = persistentStore }
        if persistentStore != nil { Self.remember(self) }
    }

    /// The tier under memory, if any; set it once at start-up, before loads use the cache.
    public var persistentStore: (any PersistentStore)? {
        get { store.withLock { $0 } }
        set {
            store.withLock { $0 = newValue }
            if newValue != nil { Self.remember(self) }
        }
    }

    /// The caches that have a persistent store, held weakly: what a proxy's shutdown flushes.
    private static let withStores = Locked<[WeakReference<ResponseCache>]>([])

    private static func remember(_ cache: ResponseCache) {
        withStores.withLock { caches in
            caches.removeAll { $0.object == nil || $0.object === cache }
            caches.append(WeakReference(cache))
        }
    }

    /// Waits until the persistent store of every cache that has one has kept every write
    /// accepted so far (``PersistentStore/flush()``).
    static func flushPersistentStores() {
        for cache in withStores.withLock({ $0.compactMap(\.object) }) { cache.persistentStore?.flush() }
    }

    /// The number of entries in memory, expired ones included until they are looked up or
    /// evicted.
    public var count: Int { memory.withLock { $0.entries.count } }

    /// Hits, misses and sizes so far.
    public var statistics: Statistics {
        var statistics = memory.withLock { tier in
            var statistics = tier.statistics
            let values = tier.entries.values
            statistics.memory = Usage(entries: values.count, bytes: values.reduce(0) { $0 + $1.response.body.count })
            return statistics
        }
        statistics.persistent = persistentStore?.usage
        return statistics
    }

    /// The time now for a load whose proxy reads `clock`: the cache's own clock if it was
    /// given one, else the load's (the system's when there is no load).
    func date(on clock: (any LoadClock)?) -> Date {
        now?() ?? clock?.date ?? Date()
    }

    /// The entry for a key that is still of use — fresh, or expired but kept (for serving
    /// stale, falling back, or revalidating) — from memory, else from the persistent store.
    ///
    /// - Parameter key: The key.
    /// - Returns: The entry (a memory entry becomes the most recently used), or `nil`.
    public func entry(for key: Key) -> Entry? {
        entry(for: key, counting: true, at: date(on: nil))
    }

    /// ``entry(for:)`` at `instant`, counted in the statistics or not (a refresh's lookup is
    /// not a load's).
    func entry(for key: Key, counting: Bool, at instant: Date) -> Entry? {
        let inMemory: Entry? = memory.withLock { tier in
            guard let entry = tier.entries.value(for: key) else { return nil }
            guard entry.keepUntil > instant else {
                tier.entries.removeValue(for: key)
                return nil
            }
            if counting {
                if entry.expiresAt > instant { tier.statistics.memoryHits += 1 } else { tier.statistics.misses += 1 }
            }
            return entry
        }
        if let inMemory { return inMemory }
        guard let store = persistentStore, let stored = store.response(for: key), stored.keepUntil > instant else {
            if counting { count { $0.misses += 1 } }
            return nil
        }
        if counting { count { if stored.expiresAt > instant { $0.persistentHits += 1 } else { $0.misses += 1 } } }
        let request = HTTPRequest(method: key.method, url: URL(string: stored.url) ?? URL(fileURLWithPath: "/"))
        let response = HTTPResponse(statusCode: stored.statusCode, headers: stored.headers, body: stored.body, url: request.url)
        return Entry(
            response: response, request: request, content: nil, storedAt: stored.storedAt, expiresAt: stored.expiresAt, keepUntil: stored.keepUntil,
            tier: .persistent)
    }

    /// Keeps a persistent store's entry in memory with its decoded content.
    func promote(_ entry: Entry, content: any Sendable, for key: Key) {
        let promoted = entry.holding(content)
        memory.withLock { _ = $0.entries.set(promoted, for: key) }
    }

    /// Stores a response as `policy` says (in memory, and in the persistent store when the
    /// policy and the response allow).
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - request: The request that fetched it.
    ///   - content: Its decoded content.
    ///   - key: The key.
    ///   - policy: How long to keep it, and where.
    public func store(_ response: HTTPResponse, request: HTTPRequest, content: any Sendable, for key: Key, policy: ResponseCache.Policy) {
        store(response, request: request, content: content, for: key, policy: policy, at: date(on: nil))
    }

    /// ``store(_:request:content:for:policy:)``, stored at `storedAt`.
    func store(_ response: HTTPResponse, request: HTTPRequest, content: any Sendable, for key: Key, policy: ResponseCache.Policy, at storedAt: Date) {
        guard let retention = policy.retention(of: response, at: storedAt) else { return }
        let entry = Entry(
            response: response, request: request, content: content, storedAt: storedAt, expiresAt: retention.expires, keepUntil: retention.keepUntil,
            tier: .memory)
        memory.withLock { tier in
            _ = tier.entries.set(entry, for: key)
            tier.statistics.stores += 1
        }
        guard retention.persists, let store = persistentStore else { return }
        store.save(StoredResponse(
            key: key, statusCode: response.statusCode, headers: StoredResponse.storableHeaders(response.headers), body: response.body,
            url: StoredResponse.storableURL(response.url), storedAt: storedAt, expiresAt: retention.expires, keepUntil: retention.keepUntil))
    }

    /// The stored response brought up to date by a `304 Not Modified`: its headers replaced by
    /// the ones the 304 sent (RFC 9111, section 4.3.4), its body kept.
    func revalidated(_ entry: Entry, by notModified: HTTPResponse) -> HTTPResponse {
        count { $0.revalidations += 1 }
        let framing: Set<String> = ["content-length", "transfer-encoding", "content-encoding"]
        let headers = entry.response.headers.merging(HTTPHeaders(notModified.headers.fields.filter { !framing.contains($0.name.lowercased()) }))
        return HTTPResponse(
            statusCode: entry.response.statusCode, headers: headers, body: entry.response.body, httpVersion: notModified.httpVersion, url: notModified.url,
            metrics: notModified.metrics)
    }

    /// Counts an event the managers see and the lookups do not.
    func count(_ update: (inout Statistics) -> Void) {
        memory.withLock { update(&$0.statistics) }
    }

    /// Forgets the responses a scope covers, in memory and in the persistent store.
    ///
    /// - Parameter scope: What to forget; ``ResponseCache/Scope/all`` forgets everything.
    public func removeAll(_ scope: Scope = .all) {
        memory.withLock { $0.entries.removeAll { scope.covers($0) } }
        persistentStore?.remove(scope)
    }
}

extension ResponseCache {
    /// How a ``ResponseCache`` has done since it was made.
    public struct Statistics: Sendable, Equatable {
        /// Lookups answered by a fresh entry in memory.
        public var memoryHits = 0
        /// Lookups answered by a fresh entry of the persistent store.
        public var persistentHits = 0
        /// Lookups that found nothing fresh (an expired entry may still have been served stale,
        /// revalidated or used as a fallback: counted below).
        public var misses = 0
        /// Loads answered with an expired entry while a refresh load ran
        /// (``ResponseCache/Policy/staleWhileRevalidate``).
        public var staleServed = 0
        /// Loads whose conditional request was answered `304 Not Modified`.
        public var revalidations = 0
        /// Loads that found no network and were answered with a stored response
        /// (``ResponseCache/Policy/offlineFallback``).
        public var offlineFallbacks = 0
        /// Responses stored.
        public var stores = 0
        /// What the memory tier holds (bytes: the bodies).
        public var memory = Usage(entries: 0, bytes: 0)
        /// What the persistent store holds, if there is one.
        public var persistent: Usage?

        /// Creates empty statistics.
        public init() {}

        /// The share of lookups answered by a fresh entry, from 0 to 1 (0 before any lookup).
        public var hitRate: Double {
            let lookups = memoryHits + persistentHits + misses
            return lookups == 0 ? 0 : Double(memoryHits + persistentHits) / Double(lookups)
        }
    }
}
