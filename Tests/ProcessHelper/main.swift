// A program the tests start in a process of its own, for what must happen before anything else
// in a process (libcurl's process-wide initialisation), or be measured alone (its memory).
// Usage: aif-test-helper COMMAND ARGS…
@_spi(Performance) import AIFNetworking
import AIFNetworkingDiskCache
import Foundation

/// `recycle-buffers URL`: opts in to recycled transfer buffers, then fetches URL 20 times.
func recycleBuffers(url: URL) async throws {
    let installed = CurlTransport.recycleLibcurlTransferBuffers()
    let transport = CurlTransport(configuration: .init(proxy: .none))
    defer { transport.shutdown() }
    var bytes = 0
    for _ in 0..<20 {
        bytes += try await transport.send(HTTPRequest(url: url)).body.count
    }
    print("installed=\(installed) again=\(CurlTransport.recycleLibcurlTransferBuffers()) bytes=\(bytes)")
}

/// `through-proxy PROXY URL`: fetches URL through PROXY (`.explicit`, no host excluded) and
/// prints the answer's body, whatever the process's `no_proxy` says.
func throughProxy(_ proxy: String, url: URL) async throws {
    let transport = CurlTransport(configuration: .init(proxy: .explicit(proxy)))
    defer { transport.shutdown() }
    print(String(decoding: try await transport.send(HTTPRequest(url: url)).body, as: UTF8.self))
}

/// `inheritable-descriptors URL`: fetches URL through a new transport, then prints each
/// descriptor opened meanwhile that a child process would inherit (not close-on-exec) — one a
/// line, as `NUMBER TARGET` — and nothing when there is none.
func inheritableDescriptors(url: URL) async throws {
    // Those open now, less any that closed as they were listed (the listing's own).
    func openDescriptors() -> Set<Int32> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(names.compactMap(Int32.init).filter { fcntl($0, F_GETFD) >= 0 })
    }
    let before = openDescriptors()
    let transport = CurlTransport(configuration: .init(proxy: .none))
    defer { transport.shutdown() }
    _ = try await transport.send(HTTPRequest(url: url))
    for descriptor in openDescriptors().subtracting(before).sorted() {
        let flags = fcntl(descriptor, F_GETFD)
        guard flags >= 0, flags & FD_CLOEXEC == 0 else { continue }
        print("\(descriptor) \((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) ?? "?")")
    }
}

/// `download URL PATH`: downloads URL to PATH and prints how far the process's peak resident
/// memory rose above what it was before the download.
func download(url: URL, to path: String) async throws {
    let transport = CurlTransport(configuration: .init(proxy: .none))
    defer { transport.shutdown() }
    _ = try await transport.send(HTTPRequest(method: .head, url: url))   // libcurl and the loop warmed up
    let before = peakResidentKiB()
    let target = FileDownload(to: URL(fileURLWithPath: path))
    do {
        let file = try await transport.download(HTTPRequest(url: url), to: target)
        print("bytes=\(file.byteCount) peak-growth-kib=\(peakResidentKiB() - before)")
    } catch {
        // What a caller would see and find: the error, and what is left on disk.
        let partial = (try? FileManager.default.attributesOfItem(atPath: target.partialFile.path)[.size] as? Int) ?? -1
        print("failed partial-bytes=\(error.partialBytes) partial-file-bytes=\(partial) destination-exists=\(FileManager.default.fileExists(atPath: path))")
        print("error: \(error)")
        exit(1)
    }
}

/// `upload URL PATH`: posts the file at PATH as the one file of a multipart form, and prints
/// the answer's body (the test server's digest of what arrived) and how far the process's
/// peak resident memory rose during the upload.
func upload(url: URL, file path: String) async throws {
    let transport = CurlTransport(configuration: .init(proxy: .none))
    defer { transport.shutdown() }
    _ = try await transport.send(HTTPRequest(method: .head, url: url))
    let before = peakResidentKiB()
    var form = HTTPRequest.MultipartForm()
    form.append("kind", "backup")
    form.appendFile("file", at: path)
    let response = try await transport.send(HTTPRequest(method: .post, url: url, body: .multipart(form)))
    print("status=\(response.statusCode) answer=\(String(decoding: response.body, as: UTF8.self).replacingOccurrences(of: " ", with: ",")) peak-growth-kib=\(peakResidentKiB() - before)")
}

/// `cache-writer DIR FIRST COUNT ROUNDS [KILL-AFTER-MS]`: stores responses for keys
/// `FIRST..<FIRST+COUNT` in the disk cache at DIR, ROUNDS times over (each round a new
/// generation), committing every ten; with KILL-AFTER-MS, kills itself with SIGKILL that long
/// after its first commit, wherever its writing has got to. Each body is self-describing
/// (`CacheWriterBody`), so a reader can tell a whole one from a torn one.
func cacheWriter(directory: String, first: Int, count: Int, rounds: Int, killAfter: Int?) throws {
    let cache = try DiskCache(directory: URL(fileURLWithPath: directory))
    var started = false
    for generation in 0..<rounds {
        for index in first..<(first + count) {
            cache.save(CacheWriterBody.response(index: index, generation: generation))
            if index % 10 == 9 {
                cache.flush()
                if !started, let killAfter {
                    started = true
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(killAfter)) { kill(getpid(), SIGKILL) }
                }
            }
        }
    }
    cache.flush()
    print("wrote=\(count * rounds)")
}

/// `cache-save-and-exit DIR INDEX`: queues the response for key INDEX in the disk cache at DIR
/// (as `cache-writer` stores it) and exits at once with status 0, without flushing: what a
/// command-line tool that loads, prints and exits does.
func cacheSaveAndExit(directory: String, index: Int) throws -> Never {
    let cache = try DiskCache(directory: URL(fileURLWithPath: directory))
    cache.save(CacheWriterBody.response(index: index, generation: 0))
    exit(0)
}

/// What the cache writer stores: a first line `index generation`, then that line's text
/// repeated to about 2 KiB.
enum CacheWriterBody {
    static func key(_ index: Int) -> ResponseCache.Key {
        ResponseCache.Key(service: "crash", environment: .online, method: .get, path: "item", parameters: ["i": .integer(index)])
    }

    static func make(index: Int, generation: Int) -> Data {
        let line = "\(index) \(generation)"
        return Data((line + "\n" + String(repeating: line + ";", count: 2048 / (line.count + 1))).utf8)
    }

    /// The response stored for `index` in round `generation`, its `ETag` the generation.
    static func response(index: Int, generation: Int) -> ResponseCache.StoredResponse {
        let now = Date()
        return ResponseCache.StoredResponse(
            key: key(index), statusCode: 200, headers: ["Content-Type": "text/plain", "ETag": "\"\(generation)\""],
            body: make(index: index, generation: generation), url: "http://127.0.0.1/item", storedAt: now,
            expiresAt: now.addingTimeInterval(3600), keepUntil: now.addingTimeInterval(7200))
    }
}

/// The process's peak resident memory so far, in KiB.
func peakResidentKiB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss
}

let usage = "usage: aif-test-helper recycle-buffers URL | through-proxy PROXY URL | inheritable-descriptors URL | download URL PATH | upload URL PATH | cache-writer DIR FIRST COUNT ROUNDS [KILL-AFTER-MS] | cache-save-and-exit DIR INDEX | in-flight URL COUNT complete|cancel-half|shutdown ALL-ARRIVED-URL\n"
let arguments = Array(CommandLine.arguments.dropFirst())

/// Exits with the usage unless the arguments after the command are `count` of them, the first a URL.
func urlAndRest(count: Int) -> (URL, [String]) {
    let rest = Array(arguments.dropFirst())
    guard rest.count == count, let url = URL(string: rest[0]) else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    return (url, Array(rest.dropFirst()))
}

switch arguments.first {
case "recycle-buffers":
    try await recycleBuffers(url: urlAndRest(count: 1).0)
case "through-proxy":
    guard arguments.count == 3, let url = URL(string: arguments[2]) else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    try await throughProxy(arguments[1], url: url)
case "inheritable-descriptors":
    try await inheritableDescriptors(url: urlAndRest(count: 1).0)
case "download":
    let (url, rest) = urlAndRest(count: 2)
    try await download(url: url, to: rest[0])
case "upload":
    let (url, rest) = urlAndRest(count: 2)
    try await upload(url: url, file: rest[0])
case "in-flight":
    let shutdown = arguments.count == 5 && arguments[3] == "shutdown"
    let (url, rest) = urlAndRest(count: shutdown ? 4 : 3)
    guard let count = Int(rest[0]), count > 0, ["complete", "cancel-half", "shutdown"].contains(rest[1]), !shutdown || URL(string: rest[2]) != nil else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    try await inFlight(url: url, count: count, mode: rest[1], allArrived: shutdown ? URL(string: rest[2]) : nil)
case "cache-writer":
    let numbers = arguments.dropFirst(2).compactMap { Int($0) }
    guard arguments.count >= 5, numbers.count == arguments.count - 2 else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    try cacheWriter(directory: arguments[1], first: numbers[0], count: numbers[1], rounds: numbers[2], killAfter: numbers.count > 3 ? numbers[3] : nil)
case "cache-save-and-exit":
    guard arguments.count == 3, let index = Int(arguments[2]) else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    try cacheSaveAndExit(directory: arguments[1], index: index)
default:
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
