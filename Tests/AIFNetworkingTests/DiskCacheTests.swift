@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingDiskCache
import DemoServer
import Foundation
import GRDB
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

// One test at a time: most do synchronous SQLite work on the test pool's threads, which under the
// sanitizer would otherwise take both threads at once and starve the timing tests beside them.
@Suite("Disk cache: persistence, limits, damage, crashes, processes", .serialized)
struct DiskCacheTests {
    private static func response(_ index: Int, body: Int = 2048, keepFor: TimeInterval = 7200, at date: Date = Date()) -> ResponseCache.StoredResponse {
        ResponseCache.StoredResponse(
            key: ResponseCache.Key(service: "shop", environment: .online, method: .get, path: "goods/{id}", parameters: ["id": .integer(index)]),
            statusCode: 200, headers: ["Content-Type": "application/json", "ETag": "\"v\(index)\"", "X-Note": "a: b"],
            body: Data(repeating: UInt8(index % 251), count: body), url: "http://127.0.0.1/v1/goods/\(index)", storedAt: date,
            expiresAt: date.addingTimeInterval(60), keepUntil: date.addingTimeInterval(keepFor))
    }

    private static func capture() -> (Logger, Locked<[(Logger.Level, String)]>) {
        let messages = Locked<[(Logger.Level, String)]>([])
        return (Logger(label: "test") { _ in CapturingLogHandler(messages: messages) }, messages)
    }

    private static func movedAside(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".unusable-") }
    }

    @Test func whatIsSavedIsReadBackByAnotherInstance() throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stored = Self.response(1, at: Date(timeIntervalSince1970: 1_800_000_000.5))
        let first = try DiskCache(directory: folder)
        first.save(stored)
        first.flush()
        let second = try DiskCache(directory: folder)
        #expect(second.response(for: stored.key) == stored)
        #expect(second.response(for: Self.response(2).key) == nil)
        #expect(second.usage == ResponseCache.Usage(entries: 1, bytes: stored.byteCount))
        #expect(try Self.movedAside(in: folder).isEmpty)
    }

    @Test func aManagerIsAnsweredFromDiskAfterARestart() async throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try await ShopStack.make(cache: ResponseCache(persistentStore: try DiskCache(directory: folder)))
        let loaded = try await before.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }.load(["id": 12])
        (before.cache.persistentStore as? DiskCache)?.flush()

        // A new cache over the same directory: what a restarted process has.
        let after = try await ShopStack.make(cache: ResponseCache(persistentStore: try DiskCache(directory: folder)))
        let manager = after.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        let restored = try await manager.load(["id": 12])
        #expect(restored.isFromCache)
        #expect(restored.content == loaded.content)
        #expect(restored.headers["ETag"] == loaded.headers["ETag"])
        #expect(restored.request.url.query == nil)
        #expect(try await manager.load(["id": 12]).isFromCache)
        #expect(after.transport.sent == 0)
        let statistics = after.cache.statistics
        #expect(statistics.persistentHits == 1)
        #expect(statistics.memoryHits == 1)
        #expect(statistics.persistent?.entries == 1)
    }

    @Test func aVersionBumpOrAChangedContentTypeMissesWhatIsOnDisk() async throws {
        struct GoodsTitle: Decodable, Sendable { let id: Int; let title: String }
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try await ShopStack.make(cache: ResponseCache(persistentStore: try DiskCache(directory: folder)))
        _ = try await writer.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; s.cachePolicy = ResponseCache.Policy(lifetime: .seconds(60), version: 1); return s }
            .load(["id": 13])
        (writer.cache.persistentStore as? DiskCache)?.flush()

        let reader = try await ShopStack.make(cache: ResponseCache(persistentStore: try DiskCache(directory: folder)))
        let bumped = reader.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; s.cachePolicy = ResponseCache.Policy(lifetime: .seconds(60), version: 2); return s }
        #expect(try await bumped.load(["id": 13]).origin == .network)
        let reshaped = reader.manager("goods/{id}", GoodsTitle.self) { var s = $0; s.cache = true; s.cachePolicy = ResponseCache.Policy(lifetime: .seconds(60), version: 1); return s }
        #expect(try await reshaped.load(["id": 13]).origin == .network)
        let same = reader.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; s.cachePolicy = ResponseCache.Policy(lifetime: .seconds(60), version: 1); return s }
        #expect(try await same.load(["id": 13]).isFromCache)
        #expect(reader.transport.sent == 2)
    }

    @Test func theLeastRecentlyUsedGoFirstWhenTheBytesOutgrowTheLimit() throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let size = Self.response(0).byteCount
        // The cache's clock, moved by hand: "recently used" is a time it reads.
        let time = Locked(Date())
        let cache = try DiskCache(directory: folder, limits: .init(maximumBytes: size * 10 + size / 2), now: { time.withLock { $0 } })
        for index in 0..<10 {
            cache.save(Self.response(index))
            cache.flush()
        }
        #expect(cache.usage.entries == 10)
        // Entry 0 is read, a second later: now the most recently used, and kept.
        time.withLock { $0 += 1 }
        #expect(cache.response(for: Self.response(0).key) != nil)
        cache.flush()
        for index in 10..<15 {
            cache.save(Self.response(index))
            cache.flush()
        }
        let usage = cache.usage
        #expect(usage.entries == 10)
        #expect(usage.bytes <= size * 10 + size / 2)
        #expect(cache.response(for: Self.response(0).key) != nil)
        for index in 1...5 { #expect(cache.response(for: Self.response(index).key) == nil, "entry \(index)") }
        for index in 6..<15 { #expect(cache.response(for: Self.response(index).key) != nil, "entry \(index)") }
    }

    @Test func theEntryCountIsLimitedTooAndExpiredEntriesAreSwept() throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = ManualClock()
        let cache = try DiskCache(directory: folder, limits: .init(maximumEntries: 5), now: { clock.date })
        for index in 0..<8 { cache.save(Self.response(index, keepFor: index < 6 ? 100 : 1000, at: clock.date)) }
        cache.flush()
        #expect(cache.usage.entries == 5)
        clock.advance(by: .seconds(200))
        cache.sweep()
        #expect(cache.usage.entries == 2)
        #expect(cache.response(for: Self.response(7).key) != nil)
    }

    @Test func invalidationReachesTheDisk() async throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try DiskCache(directory: folder)
        let cache = ResponseCache(persistentStore: disk)
        func key(_ service: ServiceName, _ environment: ServiceEnvironment.Name, _ method: String) -> ResponseCache.Key {
            ResponseCache.Key(service: service, environment: environment, method: .get, path: method, parameters: [:])
        }
        let keys = [key("shop", .online, "goods"), key("shop", .online, "orders"), key("shop", .offline, "goods"), key("news", .online, "feed")]
        let response = HTTPResponse(statusCode: 200, headers: ["Set-Cookie": "session=secret"], body: Data("{}".utf8), url: URL(string: "http://h/x?sign=abc")!)
        for key in keys {
            cache.store(response, request: HTTPRequest(url: response.url), content: "", for: key, policy: .lifetime(.seconds(60)))
        }
        disk.flush()
        #expect(disk.usage.entries == 4)
        #expect(disk.response(for: keys[0])?.headers.contains("Set-Cookie") == false)
        #expect(disk.response(for: keys[0])?.url == "http://h/x")
        cache.removeAll(.method("shop", "goods"))
        #expect(disk.usage.entries == 2)
        #expect(cache.count == 2)
        cache.removeAll(.environment("shop", .online))
        #expect(disk.usage.entries == 1)
        cache.removeAll(.service("news"))
        #expect(disk.usage.entries == 0)
        cache.store(response, request: HTTPRequest(url: response.url), content: "", for: keys[0], policy: .lifetime(.seconds(60)))
        cache.removeAll()
        #expect(disk.usage.entries == 0)
        #expect(cache.count == 0)
    }

    @Test func privateResponsesStayInMemory() throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try DiskCache(directory: folder)
        let cache = ResponseCache(persistentStore: disk)
        let key = ResponseCache.Key(service: "shop", environment: .online, method: .get, path: "account", parameters: [:])
        let response = HTTPResponse(statusCode: 200, headers: ["Cache-Control": "private, max-age=60"], body: Data("{}".utf8), url: URL(string: "http://h/x")!)
        let following = ResponseCache.Policy(lifetime: .seconds(60), followsCacheControl: true)
        cache.store(response, request: HTTPRequest(url: response.url), content: "", for: key, policy: following)
        cache.store(response, request: HTTPRequest(url: response.url), content: "", for: key, policy: ResponseCache.Policy(lifetime: .seconds(60), persists: false))
        disk.flush()
        #expect(cache.count == 1)
        #expect(disk.usage.entries == 0)
    }

    @Test func noKeyOrSignatureReachesTheFile() async throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stack = try await ShopStack.make(cache: ResponseCache(persistentStore: try DiskCache(directory: folder)))
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        var signatures: [String] = []
        for id in 1...5 {
            let response = try await manager.load(["id": .integer(id)])
            signatures += URLComponents(url: response.request.url, resolvingAgainstBaseURL: false)?.queryItems?.filter { $0.name == "sign" }.compactMap(\.value) ?? []
        }
        #expect(signatures.count == 5)
        (stack.cache.persistentStore as? DiskCache)?.flush()
        var bytes = Data()
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            bytes += try Data(contentsOf: folder.appending(path: file))
        }
        #expect(!bytes.isEmpty)
        for secret in signatures + [ShopRoutes.privateKey, ShopRoutes.publicKey, "sign="] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in the cache files")
        }
    }

    @Test func withTheServerGoneARestartedProcessFallsBackToTheDisk() async throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let policy = ResponseCache.Policy(lifetime: .seconds(1), offlineFallback: .seconds(3600))
        let online = try await ShopStack.make(cache: ResponseCache(persistentStore: try DiskCache(directory: folder)))
        let stored = try await online.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; s.cachePolicy = policy; return s }.load(["id": 14])
        (online.cache.persistentStore as? DiskCache)?.flush()

        let closed = URL(string: "http://127.0.0.1:\(try RawServer.closedPort())")!
        // The restarted process comes 1.1 s later, on its caches' clock: the entry's 1 s
        // lifetime is over, its offline fallback is not.
        let later: @Sendable () -> Date = { Date() + 1.1 }
        let offline = try await ShopStack.make(
            onlineURL: closed, cache: ResponseCache(persistentStore: try DiskCache(directory: folder, now: later), now: later))
        let fallback = try await offline.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; s.cachePolicy = policy; return s }.load(["id": 14])
        guard case .offlineFallback(_, .noNetwork) = fallback.origin else {
            Issue.record("expected an offline fallback, got \(fallback.origin)")
            return
        }
        #expect(fallback.content == stored.content)
    }

    @Test func aFileThatIsNotADatabaseIsMovedAsideAndReplaced() throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(repeating: 0x5A, count: 8192).write(to: folder.appending(path: "responses.sqlite"))
        let (logger, messages) = Self.capture()
        let cache = try DiskCache(directory: folder, logger: logger)
        cache.save(Self.response(1))
        cache.flush()
        #expect(cache.response(for: Self.response(1).key) != nil)
        #expect(try Self.movedAside(in: folder).count == 1)
        #expect(messages.withLock { $0.contains { $0.0 == .warning && $0.1.contains("moved it to responses.sqlite.unusable-") } })
    }

    @Test func anotherProgramsDatabaseIsLeftAlone() throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "responses.sqlite").path
        do {
            let foreign = try DatabaseQueue(path: path)
            try foreign.write { try $0.execute(sql: "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')") }
            try foreign.close()
        }
        let (logger, messages) = Self.capture()
        _ = try DiskCache(directory: folder, logger: logger)
        let aside = try Self.movedAside(in: folder)
        #expect(aside.count == 1)
        let kept = try DatabaseQueue(path: folder.appending(path: aside[0]).path)
        #expect(try kept.read { try String.fetchOne($0, sql: "SELECT text FROM notes") } == "mine")
        #expect(messages.withLock { $0.contains { $0.1.contains("another program's database") } })
    }

    @Test func aDatabaseWithDamagedPagesIsDetectedAndRebuilt() throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let cache = try DiskCache(directory: folder)
            for index in 0..<200 { cache.save(Self.response(index)) }
            cache.flush()
        }
        // Checkpoint the WAL into the file, then scribble over pages past the header.
        let path = folder.appending(path: "responses.sqlite").path
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try queue.close()
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        for page in stride(from: 2, to: 60, by: 3) {
            try handle.seek(toOffset: UInt64(page * 4096 + 100))
            handle.write(Data(repeating: 0xFF, count: 2000))
        }
        try handle.close()
        let (logger, messages) = Self.capture()
        let cache = try DiskCache(directory: folder, logger: logger)
        #expect(try Self.movedAside(in: folder).count == 1)
        #expect(messages.withLock { $0.contains { $0.1.contains("integrity check") || $0.1.contains("not a database") } })
        cache.save(Self.response(1))
        cache.flush()
        #expect(cache.response(for: Self.response(1).key) != nil)
    }

    /// Reads every key the cache writer may have stored; returns how many were there, and
    /// fails on any that is not whole.
    private static func checkWriterEntries(_ cache: DiskCache, first: Int, count: Int) -> Int {
        var found = 0
        for index in first..<(first + count) {
            let key = ResponseCache.Key(service: "crash", environment: .online, method: .get, path: "item", parameters: ["i": .integer(index)])
            guard let stored = cache.response(for: key) else { continue }
            found += 1
            let text = String(decoding: stored.body, as: UTF8.self)
            let lines = text.split(separator: "\n", maxSplits: 1)
            let header = String(lines[0])
            let whole = lines.count == 2 && header.hasPrefix("\(index) ") && lines[1] == String(repeating: header + ";", count: 2048 / (header.count + 1))
            #expect(whole, "entry \(index) is torn: \(text.prefix(40))")
            #expect(stored.headers["ETag"] == "\"\(header.split(separator: " ")[1])\"")
        }
        return found
    }

    @Test(.timeLimit(.minutes(3)))
    func aProcessKilledMidWriteLeavesAUsableCacheAHundredTimes() async throws {
        let folder = try makeTestFolder("disk-cache-crash")
        defer { try? FileManager.default.removeItem(at: folder) }
        var killed = 0
        var generator = SystemRandomNumberGenerator()
        // A hundred kills in the plain run. Under the thread sanitizer, three: there each fork
        // of the test process (whose sanitizer shadow memory is huge) holds up every thread
        // of the process — a hundred forks stalled the other tests' loads by more than ten
        // seconds. The sanitizer run still checks the writer and the reader; the plain run
        // makes the hundred.
        let kills = isUnderThreadSanitizer ? 3 : 100
        for _ in 0..<kills {
            let delay = Int.random(in: 1...40, using: &generator)
            let run = try await Shell.run(helperPath, ["cache-writer", folder.path, "0", "300", "1000", "\(delay)"])
            if run.status == SIGKILL { killed += 1 } else { #expect(run.status == 0, "\(run.standardError)") }
            let (logger, messages) = Self.capture()
            let cache = try DiskCache(directory: folder, logger: logger)
            #expect(Self.checkWriterEntries(cache, first: 0, count: 300) >= 10)
            #expect(messages.withLock { $0.isEmpty }, "\(messages.withLock { $0.map(\.1) })")
        }
        #expect(killed >= kills * 95 / 100)
        #expect(killed >= 1)
        #expect(try Self.movedAside(in: folder).isEmpty)
    }

    /// Processes that each queue a write and exit at once, without flushing (a command-line tool
    /// that loads, prints and exits), all at the same time: the next process finds every entry.
    /// Twenty in the plain run; five under the thread sanitizer, whose forks of the test
    /// process hold up every other thread (see the test above).
    @Test func writesQueuedWhenAProcessExitsAreCommitted() async throws {
        let folder = try makeTestFolder("disk-cache-exit")
        defer { try? FileManager.default.removeItem(at: folder) }
        let processes = isUnderThreadSanitizer ? 5 : 20
        // Started together by one shell, which fails unless each exited with 0.
        let script = """
            pids=""; for i in $(seq 0 \(processes - 1)); do '\(helperPath)' cache-save-and-exit '\(folder.path)' $i & pids="$pids $!"; done
            status=0; for pid in $pids; do wait $pid || status=1; done; exit $status
            """
        let run = try await Shell.run("/bin/bash", ["-c", script])
        #expect(run.status == 0, "\(run.standardError)")
        let cache = try DiskCache(directory: folder)
        #expect(Self.checkWriterEntries(cache, first: 0, count: processes) == processes)
    }

    @Test func twoProcessesWritingAtOnceLeaveEveryEntryWhole() async throws {
        let folder = try makeTestFolder("disk-cache-shared")
        defer { try? FileManager.default.removeItem(at: folder) }
        async let one = Shell.run(helperPath, ["cache-writer", folder.path, "0", "200", "5"])
        async let two = Shell.run(helperPath, ["cache-writer", folder.path, "200", "200", "5"])
        let runs = try await [one, two]
        for run in runs { #expect(run.status == 0 && run.standardOutput.contains("wrote=1000"), "\(run.standardError)") }
        let (logger, messages) = Self.capture()
        let cache = try DiskCache(directory: folder, logger: logger)
        #expect(Self.checkWriterEntries(cache, first: 0, count: 400) == 400)
        #expect(cache.usage.entries == 400)
        #expect(messages.withLock { $0.isEmpty })
    }

    @Test func readsAndWritesFromManyThreadsAtOnce() async throws {
        let folder = try makeTestFolder("disk-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try DiskCache(directory: folder)
        // On Dispatch's threads, not the test pool's: the reads are synchronous.
        await withCheckedContinuation { done in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 8) { worker in
                    for step in 0..<50 {
                        let index = (worker * 7 + step) % 40
                        if step % 3 == 0 { cache.save(Self.response(index, body: 256)) } else { _ = cache.response(for: Self.response(index).key) }
                    }
                }
                done.resume()
            }
        }
        cache.flush()
        #expect(cache.usage.entries <= 40)
        #expect(cache.usage.entries > 0)
    }
}
