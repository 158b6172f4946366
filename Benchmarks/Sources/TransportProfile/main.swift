@_spi(Performance) import AIFNetworking
// The opt-in to libcurl buffer recycling is the transport's.
@_spi(Performance) import AIFTransport
import AIFNetworkingInterfaces
import BenchSupport
import CurlLoop
import Dispatch
import Foundation
import Synchronization

// A synchronous driver for instruction-level profiling: valgrind cannot follow Swift's async
// `main` on this platform, so this runs a fixed number of requests without one.
//
//     valgrind --tool=callgrind TransportProfile transport|transport-async|transport-stream|manager|manager-loop|manager-handoff|manager-async|interface-async|libcurl-c|libcurl-c-same-wire URL CONCURRENCY REQUESTS
//
// `manager` is the full manager stack: a signed GET through APIManager, decoded, delivered to a
// delegate (immediately, on the thread that ended the load), which starts the next load;
// `manager-loop` the same with the loads' work on the transport's thread, `manager-handoff` with it
// on the library's load executor (`manager` leaves the choice to the proxy: automatic);
// `libcurl-c-same-wire` the C loop sending the transport's default `User-Agent` and
// `Accept-Encoding` lines too, so that it puts the transport's request on the wire byte for byte.
//
// Divide the instruction total by REQUESTS (after subtracting a run with a small REQUESTS, to
// remove start-up) for instructions per request. With `PROFILE_POST=1` in the environment,
// `libcurl-c`, `transport` and the delegate-face managers POST the benchmark's order (give them
// a URL that answers POSTs: `TransportBench serve` answers every request).

let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "decode", let rounds = Int(arguments[2]) {
    // `TransportProfile decode N`: microseconds per decode of the benchmark's JSON.
    let payload = Data(BenchPayload.json.utf8)
    func time(_ label: String, _ decode: () throws -> BenchCatalogue) rethrows {
        for _ in 0..<1000 { _ = try decode() }
        let start = ContinuousClock.now
        for _ in 0..<rounds { _ = try decode() }
        let elapsed = ContinuousClock.now - start
        let micros = (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(rounds)
        print(label.padding(toLength: 44, withPad: " ", startingAt: 0) + String(format: "%6.1f µs", micros))
    }
    let foundation = JSONDecoder()
    foundation.keyDecodingStrategy = .convertFromSnakeCase
    let fast = FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase)
    try time("JSONDecoder, convertFromSnakeCase") { try foundation.decode(BenchCatalogue.self, from: payload) }
    try time("FastJSONDecoder, convertFromSnakeCase") { try fast.decode(BenchCatalogue.self, from: payload) }
    try time("JSONDecoder, explicit keys") { try JSONDecoder().decode(ExplicitCatalogue.self, from: payload).catalogue }
    try time("FastJSONDecoder, explicit keys") { try FastJSONDecoder().decode(ExplicitCatalogue.self, from: payload).catalogue }
    exit(0)
}
guard arguments.count == 5, let concurrency = Int(arguments[3]), let total = Int(arguments[4]) else {
    print("usage: TransportProfile transport|transport-async|transport-stream|manager|manager-loop|manager-handoff|manager-async|interface-async|libcurl-c|libcurl-c-same-wire URL CONCURRENCY REQUESTS")
    exit(2)
}
let url = arguments[2]
let posts = ProcessInfo.processInfo.environment["PROFILE_POST"] != nil
// As in TransportBench: the opt-in for libcurl's transfer buffers, unless measuring without it.
if ProcessInfo.processInfo.environment["AIF_BENCH_PLAIN_MALLOC"] == nil {
    CurlTransport.recycleLibcurlTransferBuffers()
}

/// The transport every Swift mode runs on: HTTP/1.1, one connection for each request in flight,
/// as the C loop has.
func profiledConfiguration(concurrency: Int) -> CurlTransport.Configuration {
    var configuration = CurlTransport.Configuration(proxy: .none)
    configuration.httpVersion = .http1Only
    configuration.connectionPool.maxConnectionsPerHost = concurrency
    return configuration
}

switch arguments[1] {
case "libcurl-c", "libcurl-c-same-wire":
    guard let loop = aif_bench_curl_loop_create(url, nil, Int32(concurrency), 0, 0, 0, posts ? BenchPayload.orderJSON : nil) else { exit(1) }
    if arguments[1] == "libcurl-c-same-wire" {
        // The C loop sending the transport's default headers too: the same request on the wire.
        let userAgent = CurlTransport.Configuration(proxy: .none).defaultHeaders["User-Agent"] ?? ""
        aif_bench_curl_loop_send_as_transport(loop, userAgent)
    }
    var failures = 0
    // By count, as the Swift clients below run: every handle busy until the last requests.
    let completed = aif_bench_curl_loop_run_requests(loop, total, &failures)
    aif_bench_curl_loop_destroy(loop)
    print("completed \(completed), failed \(failures)")
case "transport":
    var configuration = profiledConfiguration(concurrency: concurrency)
    // For finding what the defaults cost: the request as the C loop sends it, without the
    // default User-Agent (PROFILE_NO_USER_AGENT), without Accept-Encoding (PROFILE_NO_DECOMPRESSION)
    // or without either (PROFILE_BARE).
    let environment = ProcessInfo.processInfo.environment
    if environment["PROFILE_BARE"] != nil || environment["PROFILE_NO_USER_AGENT"] != nil {
        configuration.defaultHeaders = [:]
    }
    if environment["PROFILE_BARE"] != nil || environment["PROFILE_NO_DECOMPRESSION"] != nil {
        configuration.decompression = .disabled
    }
    let transport = CurlTransport(configuration: configuration)
    let request = posts
        ? HTTPRequest(method: .post, url: URL(string: url)!, headers: ["Content-Type": "application/json"], body: .bytes(Data(BenchPayload.orderJSON.utf8)))
        : HTTPRequest(url: URL(string: url)!)
    let done = DispatchSemaphore(value: 0)
    final class Counter: @unchecked Sendable {
        // Touched only on the transport's thread (completion handlers), after the first sends.
        var started = 0
        var finished = 0
    }
    let counter = Counter()
    @Sendable func send() {
        transport.send(request) { _ in
            counter.finished += 1
            if counter.started < total {
                counter.started += 1
                send()
            } else if counter.finished == total {
                done.signal()
            }
        }
    }
    // The first sends come from this thread; completions cannot run before the loop sees them,
    // and the counter is only read on the loop after that.
    counter.started = concurrency
    for _ in 0..<concurrency { send() }
    done.wait()
    transport.shutdown()
    print("completed \(counter.finished)")
case "transport-async":
    // The transport's async face from tasks started here, as `manager-async` below: `concurrency`
    // tasks awaiting one request after another.
    let transport = CurlTransport(configuration: profiledConfiguration(concurrency: concurrency))
    let request = HTTPRequest(url: URL(string: url)!)
    let failed = awaitInTasks(concurrency: concurrency, total: total) { (try? await transport.send(request).statusCode) == 200 }
    transport.shutdown()
    print("completed \(total), failed \(failed)")
case "transport-stream":
    // The transport's stream face (what the generated OpenAPI client and server-sent events
    // use): `concurrency` tasks each streaming one response after another, reading its body whole.
    let transport = CurlTransport(configuration: profiledConfiguration(concurrency: concurrency))
    let request = HTTPRequest(url: URL(string: url)!)
    let failed = awaitInTasks(concurrency: concurrency, total: total) {
        guard let response = try? await transport.stream(request), response.statusCode == 200 else { return false }
        return (try? await response.body.collect(upTo: 1 << 20).count) == BenchPayload.json.utf8.count
    }
    transport.shutdown()
    print("completed \(total), failed \(failed)")
case "manager", "manager-loop", "manager-handoff":
    let transport = CurlTransport(configuration: profiledConfiguration(concurrency: concurrency))
    let registry = ServiceRegistry(processEnvironment: [:])
    registry.register(BenchService(baseURL: URL(string: url)!.deletingLastPathComponent()))
    let placement: LoadExecutorChoice = switch arguments[1] {
    case "manager-loop": .transportThread
    case "manager-handoff": .loadExecutor
    default: .automatic
    }
    let proxy = APIProxy(transport: transport, loadExecutor: placement)
    let manager: APIManager<BenchCatalogue> = posts
        ? BenchOrderManager(proxy: proxy, registry: registry, cache: ResponseCache(capacity: 1))
        : BenchCatalogueManager(proxy: proxy, registry: registry, cache: ResponseCache(capacity: 1))
    manager.callbackExecutor = .immediate
    final class Chain: APIManagerDelegate {
        let counts = Mutex((started: 0, finished: 0, failed: 0))
        let total: Int
        let parameters: Parameters
        let done = DispatchSemaphore(value: 0)

        init(total: Int, parameters: Parameters) {
            self.total = total
            self.parameters = parameters
        }

        func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
            next(manager, failed: (response.content as? BenchCatalogue)?.items.count != 6)
        }

        func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
            next(manager, failed: true)
        }

        private func next<Content>(_ manager: APIManager<Content>, failed: Bool) {
            let (more, finished) = counts.withLock { counts -> (Bool, Bool) in
                counts.finished += 1
                if failed { counts.failed += 1 }
                guard counts.started < total else { return (false, counts.finished == total) }
                counts.started += 1
                return (true, false)
            }
            if more { manager.loadData(with: parameters) } else if finished { done.signal() }
        }
    }
    let chain = Chain(total: total, parameters: posts ? BenchPayload.order : [:])
    manager.delegate = chain
    chain.counts.withLock { $0.started = concurrency }
    for _ in 0..<concurrency { manager.loadData(with: chain.parameters) }
    chain.done.wait()
    transport.shutdown()
    let counts = chain.counts.withLock { $0 }
    print("completed \(counts.finished), failed \(counts.failed)")
case "manager-async", "interface-async":
    // The async face from tasks started here (the main thread waits on a semaphore, not on an
    // async `main`): `concurrency` tasks awaiting one load after another, through the manager
    // or through the same endpoint declared as a typed interface.
    let transport = CurlTransport(configuration: profiledConfiguration(concurrency: concurrency))
    let registry = ServiceRegistry(processEnvironment: [:])
    registry.register(BenchService(baseURL: URL(string: url)!.deletingLastPathComponent()))
    let proxy = APIProxy(transport: transport)
    let manager = BenchCatalogueManager(proxy: proxy, registry: registry, cache: ResponseCache(capacity: 1))
    let api = ProfiledAPIClient(registry: registry, proxy: proxy, cache: ResponseCache(capacity: 1))
    let throughInterface = arguments[1] == "interface-async"
    let failed = awaitInTasks(concurrency: concurrency, total: total) {
        let count = throughInterface ? (try? await api.catalogue())?.items.count : (try? await manager.load())?.content.items.count
        return count == 6
    }
    transport.shutdown()
    print("completed \(total), failed \(failed)")
default:
    print("unknown client \(arguments[1])")
    exit(2)
}

/// Runs `total` calls of `call` from `concurrency` tasks started here, each awaiting one call
/// after another, while this thread waits on a semaphore (not an async `main`, which valgrind
/// cannot follow); returns how many calls failed.
func awaitInTasks(concurrency: Int, total: Int, _ call: @escaping @Sendable () async -> Bool) -> Int {
    final class Tickets: Sendable {
        let counts = Mutex((taken: 0, failed: 0))
    }
    let tickets = Tickets()
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<concurrency {
        Task.detached {
            while tickets.counts.withLock({ tickets in
                guard tickets.taken < total else { return false }
                tickets.taken += 1
                return true
            }) {
                if await !call() { tickets.counts.withLock { $0.failed += 1 } }
            }
            done.signal()
        }
    }
    for _ in 0..<concurrency { done.wait() }
    return tickets.counts.withLock { $0.failed }
}

/// The benchmark's endpoint as a typed interface (as TransportBench's `interface-async` declares it).
@API(service: "bench")
protocol ProfiledAPI: Sendable {
    @GET("small.json")
    func catalogue() async throws(APIError) -> BenchCatalogue
}
