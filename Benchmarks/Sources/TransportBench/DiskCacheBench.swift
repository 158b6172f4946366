import AIFNetworking
import AIFNetworkingDiskCache
import Foundation

/// The cache's costs per operation with a 2 KiB body, in this process: a memory-tier hit, a
/// hit read from the disk tier (memory holding none of the keys looked up), and a write
/// committed on its own. Medians of 15 batches; prints the `DISKCACHE` line.
struct DiskCacheBench {
    var batches = 15
    var operationsPerBatch = 400

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "aif-bench-diskcache-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try DiskCache(directory: folder)
        let body = Data(repeating: UInt8(ascii: "x"), count: 2048)
        let keys = (0..<operationsPerBatch).map {
            ResponseCache.Key(service: "bench", environment: .online, method: .get, path: "goods/{id}", parameters: ["id": .integer($0)], schema: "0123456789abcdef")
        }
        let response = HTTPResponse(
            statusCode: 200, headers: ["Content-Type": "application/json", "ETag": "\"v1\""], body: body, url: URL(string: "http://127.0.0.1/v1/goods/1")!)
        let request = HTTPRequest(url: response.url)
        let policy = ResponseCache.Policy.lifetime(.seconds(3600))

        // Writes: each saved and committed alone (the slowest way a write can happen).
        let writes = measure { batch in
            for key in keys {
                disk.save(ResponseCache.StoredResponse(
                    key: key, statusCode: 200, headers: response.headers, body: body, url: "http://127.0.0.1/v1/goods/\(batch)", storedAt: Date(),
                    expiresAt: Date().addingTimeInterval(3600), keepUntil: Date().addingTimeInterval(7200)))
                disk.flush()
            }
        }
        // Disk hits: a memory tier of one entry, cycling through more keys than it holds.
        let throughDisk = ResponseCache(capacity: 1, persistentStore: disk)
        let diskHits = measure { _ in
            for key in keys where throughDisk.entry(for: key)?.tier != .persistent {
                fatalError("\(key) was not read from disk")
            }
        }
        // Memory hits: every key in memory.
        let inMemory = ResponseCache(capacity: keys.count * 2)
        for key in keys { inMemory.store(response, request: request, content: body, for: key, policy: policy) }
        let memoryHits = measure { _ in
            for key in keys where inMemory.entry(for: key) == nil { fatalError("\(key) is not in memory") }
        }
        say(String(format: "DISKCACHE hit-us=%.1f write-us=%.1f memory-hit-us=%.2f", diskHits, writes, memoryHits))
    }

    /// The median over batches of the time per operation, in microseconds.
    private func measure(_ batch: (Int) -> Void) -> Double {
        batch(-1)   // warm-up
        var perOperation: [Double] = []
        for index in 0..<batches {
            let start = ContinuousClock.now
            batch(index)
            let elapsed = ContinuousClock.now - start
            perOperation.append((Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(operationsPerBatch))
        }
        return median(perOperation)
    }
}
