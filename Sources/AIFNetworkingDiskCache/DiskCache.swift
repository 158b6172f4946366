// The product's one dependency, GRDB, comes only with the package's `DiskCache` trait, so that
// packages using the core library alone never resolve it:
//     .package(url: "…/AIFNetworking.git", from: "…", traits: ["DiskCache"])
#if DiskCache
import AIFNetworking
import Foundation
import GRDB
import Logging
@_spi(CrossModule) import AIFTransport

/// A ``ResponseCache/PersistentStore`` on SQLite (through GRDB): responses survive restarts, are
/// shared by the processes that open the same directory, and are evicted least recently used
/// first when the cache outgrows its limits.
///
/// ```swift
/// import AIFNetworkingDiskCache
///
/// ResponseCache.shared.persistentStore = try DiskCache(directory: cachesFolder.appending(path: "aif"))
/// ```
///
/// - One database per directory (`responses.sqlite`), in WAL mode: reads never wait for
///   writes, and a process killed mid-write leaves the last committed state.
/// - Reads happen on the calling thread (a disk hit of a 2 KiB body takes tens of
///   microseconds). Writes are queued and committed in batches on a writer queue of the
///   cache's own, never on the caller's thread; ``flush()`` waits for them. Writes still queued
///   when the process ends normally (`exit`, or `main` returning) are committed then, so a
///   command-line tool that loads, prints and exits keeps what it loaded; a crash or `SIGKILL`
///   loses only what was still queued, never what was committed.
/// - A file that is not this cache's database — corrupt, truncated, another program's — is
///   moved aside (`responses.sqlite.unusable-…`) with a warning in the log, and a new one is
///   made. A database that fails while in use is rebuilt the same way.
/// - Entries past their ``ResponseCache/StoredResponse/keepUntil`` are swept on the writer queue, at most
///   once per ``Limits/sweepInterval``.
public final class DiskCache: ResponseCache.PersistentStore {
    /// How much the cache keeps.
    public struct Limits: Sendable, Hashable {
        /// The most bytes (bodies, headers, keys) it keeps; 64 MiB by default.
        public var maximumBytes: Int
        /// The most responses it keeps; 10,000 by default.
        public var maximumEntries: Int
        /// How often expired entries are swept; a minute by default.
        public var sweepInterval: Duration

        /// Creates limits.
        ///
        /// - Parameters:
        ///   - maximumBytes: The most bytes; 64 MiB by default.
        ///   - maximumEntries: The most responses; 10,000 by default.
        ///   - sweepInterval: How often expired entries are swept; a minute by default.
        public init(maximumBytes: Int = 64 << 20, maximumEntries: Int = 10_000, sweepInterval: Duration = .seconds(60)) {
            self.maximumBytes = maximumBytes
            self.maximumEntries = maximumEntries
            self.sweepInterval = sweepInterval
        }
    }

    /// The directory the database is in.
    public let directory: URL
    /// The database file.
    public let databaseURL: URL
    /// What the cache keeps at most.
    public let limits: Limits

    private let database: Locked<DatabasePool?>
    private let queue = DispatchQueue(label: "AIFNetworking.DiskCache.writer")
    private let pending = Locked(PendingWrites())
    /// When expired entries were last swept; read and written on the writer queue only.
    private let lastSweep = Locked<Date?>(nil)
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// Opens (or creates) the cache in a directory.
    ///
    /// - Parameters:
    ///   - directory: The directory; created if missing.
    ///   - limits: What to keep at most.
    ///   - logger: Where warnings go (a file moved aside, a failed write).
    ///   - now: The wall clock; the system's by default.
    /// - Throws: ``DiskCacheError`` when the directory cannot be made or no database can be
    ///   opened in it even after moving an unusable file aside.
    public init(
        directory: URL, limits: Limits = Limits(), logger: Logger = Logger(label: "AIFNetworking.DiskCache"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(DiskCacheError) {
        self.directory = directory
        databaseURL = directory.appending(path: "responses.sqlite")
        self.limits = limits
        self.logger = logger
        self.now = now
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DiskCacheError(path: directory.path, reason: "the directory cannot be made: \(error.localizedDescription)")
        }
        database = Locked(try Self.open(databaseURL, logger: logger))
        FlushAtExit.add(self)
    }

    // MARK: ResponseCache.PersistentStore

    /// The stored response for a key, read on the calling thread; `nil` when there is none or
    /// it cannot be read (a failure is logged, and a corrupt database rebuilt).
    ///
    /// - Parameter key: The key.
    /// - Returns: The response.
    public func response(for key: ResponseCache.Key) -> ResponseCache.StoredResponse? {
        guard let pool = database.withLock({ $0 }) else { return nil }
        let storageKey = key.storageKey
        let row: Row?
        do {
            row = try pool.read { db in
                try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM response WHERE key = ?"), arguments: [storageKey])
            }
        } catch {
            failed(error, while: "reading \(key)", in: pool)
            return nil
        }
        guard let row else { return nil }
        touch(storageKey)
        return ResponseCache.StoredResponse(
            key: key, statusCode: row["status"], headers: HeaderText.decode(row["headers"]), body: row["body"], url: row["url"],
            storedAt: Date(timeIntervalSince1970: row["stored_at"]), expiresAt: Date(timeIntervalSince1970: row["expires_at"]),
            keepUntil: Date(timeIntervalSince1970: row["keep_until"]))
    }

    /// Queues a response to be written; returns at once.
    ///
    /// - Parameter response: The response.
    public func save(_ response: ResponseCache.StoredResponse) {
        enqueue(.save(response))
    }

    /// Removes what a scope covers, and waits until it is gone (with every write queued
    /// before it), so that no later read sees it.
    ///
    /// - Parameter scope: What to remove.
    public func remove(_ scope: ResponseCache.Scope) {
        enqueue(.remove(scope))
        flush()
    }

    /// The number of stored responses and their size.
    public var usage: ResponseCache.Usage {
        guard let pool = database.withLock({ $0 }) else { return ResponseCache.Usage(entries: 0, bytes: 0) }
        do {
            return try pool.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS entries, COALESCE(SUM(size), 0) AS bytes FROM response")
                return ResponseCache.Usage(entries: row?["entries"] ?? 0, bytes: row?["bytes"] ?? 0)
            }
        } catch {
            failed(error, while: "measuring the cache", in: pool)
            return ResponseCache.Usage(entries: 0, bytes: 0)
        }
    }

    // MARK: Writing

    /// Waits until every write queued so far is committed.
    public func flush() {
        queue.sync { drain() }
    }

    /// Deletes the entries past their `keepUntil` now, and evicts down to the limits;
    /// otherwise done at most once per ``Limits/sweepInterval`` after writes.
    public func sweep() {
        queue.sync {
            drain()
            write("sweeping") { db in try self.sweep(db) }
        }
    }

    /// Commits, when the process ends normally, the writes every open cache still has queued:
    /// registered with `atexit` when the first cache opens; the caches are held weakly (one
    /// with writes queued is kept alive by them).
    private enum FlushAtExit {
        private struct Entry {
            weak var cache: DiskCache?
        }

        private static let caches = Locked<[Entry]>([])
        private static let registration: Void = {
            atexit { FlushAtExit.flushAll() }
        }()

        static func add(_ cache: DiskCache) {
            _ = registration
            caches.withLock { entries in
                entries.removeAll { $0.cache == nil }
                entries.append(Entry(cache: cache))
            }
        }

        private static func flushAll() {
            for cache in caches.withLock({ $0.compactMap(\.cache) }) { cache.flush() }
        }
    }

    private func enqueue(_ operation: PendingWrites.Operation) {
        let schedule = pending.withLock { pending in
            pending.operations.append(operation)
            defer { pending.isScheduled = true }
            return !pending.isScheduled
        }
        if schedule { queue.async { self.drain() } }
    }

    private func touch(_ storageKey: String) {
        let date = now()
        let schedule = pending.withLock { pending in
            pending.touched[storageKey] = date
            defer { pending.isScheduled = true }
            return !pending.isScheduled
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Commits what is queued, in one transaction. On the writer queue.
    private func drain() {
        let (operations, touched) = pending.withLock { pending in
            defer { pending = PendingWrites() }
            return (pending.operations, pending.touched)
        }
        guard !operations.isEmpty || !touched.isEmpty else { return }
        let sweepDue = lastSweep.withLock { $0 }.map { now().timeIntervalSince($0) >= limits.sweepInterval.timeInterval } ?? true
        write("writing \(operations.count) changes") { db in
            for operation in operations {
                switch operation {
                case .save(let response): try self.insert(response, db)
                case .remove(let scope): try self.delete(scope, db)
                }
            }
            for (key, date) in touched {
                try db.cachedStatement(sql: "UPDATE response SET last_used = ? WHERE key = ?").execute(arguments: [date.timeIntervalSince1970, key])
            }
            if sweepDue { try self.sweep(db) } else { try self.evict(db) }
        }
        if sweepDue { lastSweep.withLock { $0 = now() } }
    }

    private func insert(_ response: ResponseCache.StoredResponse, _ db: Database) throws {
        let key = response.key
        try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO response
            (key, service, environment, method_name, status, headers, body, url, stored_at, expires_at, keep_until, last_used, size)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
                key.storageKey, key.service.rawValue, key.environment.rawValue, key.path, response.statusCode,
                HeaderText.encode(response.headers), response.body, response.url, response.storedAt.timeIntervalSince1970,
                response.expiresAt.timeIntervalSince1970, response.keepUntil.timeIntervalSince1970, now().timeIntervalSince1970, response.byteCount,
            ])
    }

    private func delete(_ scope: ResponseCache.Scope, _ db: Database) throws {
        switch scope {
        case .all: try db.execute(sql: "DELETE FROM response")
        case .service(let service): try db.execute(sql: "DELETE FROM response WHERE service = ?", arguments: [service.rawValue])
        case .environment(let service, let environment):
            try db.execute(sql: "DELETE FROM response WHERE service = ? AND environment = ?", arguments: [service.rawValue, environment.rawValue])
        case .method(let service, let path):
            try db.execute(sql: "DELETE FROM response WHERE service = ? AND method_name = ?", arguments: [service.rawValue, path])
        }
    }

    /// Deletes what no load can use any more, then evicts down to the limits.
    private func sweep(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM response WHERE keep_until <= ?", arguments: [now().timeIntervalSince1970])
        try evict(db)
    }

    /// Deletes the least recently used entries until the cache is within its limits.
    private func evict(_ db: Database) throws {
        guard let totals = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS entries, COALESCE(SUM(size), 0) AS bytes FROM response") else { return }
        var entries: Int = totals["entries"]
        var bytes: Int = totals["bytes"]
        guard entries > limits.maximumEntries || bytes > limits.maximumBytes else { return }
        var victims: [String] = []
        let oldest = try Row.fetchCursor(db, sql: "SELECT key, size FROM response ORDER BY last_used")
        while entries > limits.maximumEntries || bytes > limits.maximumBytes, let row = try oldest.next() {
            victims.append(row["key"])
            entries -= 1
            bytes -= row["size"] as Int
        }
        for key in victims {
            try db.cachedStatement(sql: "DELETE FROM response WHERE key = ?").execute(arguments: [key])
        }
    }

    /// Runs a write transaction; a failure is logged (and a corrupt database rebuilt), and the
    /// writes are dropped — a cache may lose entries, never break a load.
    private func write(_ activity: String, _ body: @escaping @Sendable (Database) throws -> Void) {
        guard let pool = database.withLock({ $0 }) else { return }
        do {
            try pool.write(body)
        } catch {
            failed(error, while: activity, in: pool)
        }
    }

    // MARK: Failures

    private func failed(_ error: any Error, while activity: String, in pool: DatabasePool) {
        let corrupt = (error as? DatabaseError).map { [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains($0.resultCode) } ?? false
        logger.warning("disk cache at \(databaseURL.path): \(activity) failed: \(error)")
        guard corrupt else { return }
        queue.async { self.rebuild(replacing: pool) }
    }

    /// Replaces a database found corrupt while in use (once, however many reads saw it). On
    /// the writer queue.
    private func rebuild(replacing broken: DatabasePool) {
        let current = database.withLock { pool in
            guard pool === broken else { return false }
            pool = nil
            return true
        }
        guard current else { return }
        try? broken.close()
        do {
            try Self.moveAside(databaseURL, because: "it is corrupt", logger: logger)
            let fresh = try Self.open(databaseURL, logger: logger)
            database.withLock { $0 = fresh }
        } catch {
            logger.error("disk cache at \(databaseURL.path) is off until the next start: \(error)")
        }
    }

    // MARK: Opening

    /// What marks a database as this cache's (`PRAGMA application_id`): "AIFC".
    static let applicationID: Int32 = 0x4149_4643
    /// The table layout's version (`PRAGMA user_version`); a database of another version is
    /// emptied and laid out anew (a cache holds nothing that cannot be fetched again).
    static let schemaVersion = 1

    /// Opens the database, moving an unusable file aside once.
    static func open(_ url: URL, logger: Logger) throws(DiskCacheError) -> DatabasePool {
        do {
            return try openWaitingForOthers(url)
        } catch let unusable as Unusable {
            try moveAside(url, because: unusable.reason, logger: logger)
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            try moveAside(url, because: "it is not a database (\(error.resultCode))", logger: logger)
        } catch {
            throw DiskCacheError(path: url.path, reason: "the database cannot be opened: \(error)")
        }
        do {
            return try openWaitingForOthers(url)
        } catch {
            throw DiskCacheError(path: url.path, reason: "no database can be made: \(error)")
        }
    }

    /// ``openChecked(_:)``, tried again for up to ten seconds while another process holds
    /// the database locked: switching a new file to WAL, as two processes starting at once
    /// both do, is refused at once rather than waited for.
    private static func openWaitingForOthers(_ url: URL) throws -> DatabasePool {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                return try openChecked(url)
            } catch let error as DatabaseError where [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode) && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    private struct Unusable: Error {
        let reason: String
    }

    private static func openChecked(_ url: URL) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "AIFNetworking.DiskCache"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        do {
            try pool.write { db in
                let application = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                if application == applicationID, version == schemaVersion, tables.contains("response") {
                    guard try String.fetchOne(db, sql: "PRAGMA quick_check") == "ok" else { throw Unusable(reason: "it fails SQLite's integrity check") }
                    return
                }
                guard application == applicationID || application == 0 && tables.isEmpty else {
                    throw Unusable(reason: "it is another program's database")
                }
                try db.execute(sql: "DROP TABLE IF EXISTS response")
                try db.execute(sql: """
                    CREATE TABLE response (
                        key TEXT PRIMARY KEY NOT NULL,
                        service TEXT NOT NULL,
                        environment TEXT NOT NULL,
                        method_name TEXT NOT NULL,
                        status INTEGER NOT NULL,
                        headers TEXT NOT NULL,
                        body BLOB NOT NULL,
                        url TEXT NOT NULL,
                        stored_at DOUBLE NOT NULL,
                        expires_at DOUBLE NOT NULL,
                        keep_until DOUBLE NOT NULL,
                        last_used DOUBLE NOT NULL,
                        size INTEGER NOT NULL
                    );
                    CREATE INDEX response_last_used ON response(last_used);
                    CREATE INDEX response_keep_until ON response(keep_until);
                    CREATE INDEX response_scope ON response(service, environment, method_name);
                    PRAGMA application_id = \(applicationID);
                    PRAGMA user_version = \(schemaVersion);
                    """)
            }
        } catch {
            try? pool.close()
            throw error
        }
        return pool
    }

    private static func moveAside(_ url: URL, because reason: String, logger: Logger) throws(DiskCacheError) {
        let stamp = Int(Date().timeIntervalSince1970 * 1000)
        let aside = url.deletingLastPathComponent().appending(path: "\(url.lastPathComponent).unusable-\(stamp)")
        do {
            try FileManager.default.moveItem(at: url, to: aside)
            for suffix in ["-wal", "-shm"] {
                let companion = URL(fileURLWithPath: url.path + suffix)
                if FileManager.default.fileExists(atPath: companion.path) { try FileManager.default.removeItem(at: companion) }
            }
        } catch {
            throw DiskCacheError(path: url.path, reason: "\(reason), and it cannot be moved aside: \(error.localizedDescription)")
        }
        logger.warning("disk cache at \(url.path): \(reason); moved it to \(aside.lastPathComponent) and started a new one")
    }
}

/// What is waiting for the writer queue.
private struct PendingWrites {
    enum Operation {
        case save(ResponseCache.StoredResponse)
        case remove(ResponseCache.Scope)
    }

    var operations: [Operation] = []
    /// Keys read since the last commit, with when: their `last_used` for eviction.
    var touched: [String: Date] = [:]
    var isScheduled = false
}

/// Headers as the database keeps them: one `name: value` per line.
enum HeaderText {
    static func encode(_ headers: HTTPHeaders) -> String {
        headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    static func decode(_ text: String) -> HTTPHeaders {
        HTTPHeaders(text.split(separator: "\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            var value = line[colon...].dropFirst()
            if value.first == " " { value = value.dropFirst() }
            return (String(line[..<colon]), String(value))
        })
    }
}

/// The disk cache could not be opened.
public struct DiskCacheError: Error, CustomStringConvertible {
    /// The file or directory concerned.
    public let path: String
    /// What was wrong, in plain words.
    public let reason: String

    /// `disk cache at PATH: REASON`.
    public var description: String { "disk cache at \(path): \(reason)" }
}

#else
#warning("AIFNetworkingDiskCache is empty: enable the AIFNetworking package's \"DiskCache\" trait (traits: [\"DiskCache\"]) to build it")
#endif
