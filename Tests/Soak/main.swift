// `aif-soak [--loads N] [--concurrency C] [--minutes M] [--only KIND]` (`make soak`): N loads
// (100,000), C at a time (256), of every kind or only KIND (a case of `LoadKind`, to tell where
// memory goes), through the manager stack against the demo shop and a fault server, all in this
// process on loopback. It fails unless every load ended exactly once, the process's memory stayed
// flat after the first 10,000 and its descriptors came back to where they were.
//
// The servers run in a child process (`aif-soak --serve`), so that what is measured — memory,
// descriptors — is the client's alone: the demo shop remembers every nonce it accepted for ten
// minutes, about 150 bytes a signed request.
import AIFNetworking
import AIFNetworkingTesting
import DemoServer
import Foundation
import NIOCore
import NIOPosix
import ProcessResources
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]) else { return value }
    return number
}

let loadCount = option("--loads", default: 100_000)
let concurrency = option("--concurrency", default: 256)
let timeLimit = Duration.seconds(option("--minutes", default: 20) * 60)
let onlyKind: LoadKind? = CommandLine.arguments.firstIndex(of: "--only").flatMap { index in
    LoadKind.allCases.first { "\($0)" == CommandLine.arguments.dropFirst(index + 1).first }
}
raiseDescriptorLimit()

if CommandLine.arguments.contains("--serve") {
    try await serve()
}
let servers = try ServerProcess.start()
let registry = try makeRegistry(shop: servers.shop, faults: servers.faults, stall: servers.stall)

// The runtime opens descriptors of its own on first use (Dispatch's, the servers' first
// connections): a warm-up on a transport of its own, gone before the count. (The account load
// has no authenticator yet, and is refused.)
do {
    let warmUp = CurlTransport(configuration: .init(proxy: .none))
    let proxy = APIProxy(transport: warmUp)
    for kind in LoadKind.allCases where kind != .cancelled {
        _ = try? await kind.manager(proxy: proxy, registry: registry).load(kind.parameters(0))
    }
    // Its shutdown returns with its descriptors closed.
    warmUp.shutdown()
}
let descriptorsBefore = openDescriptorCount()

let ledger = SoakLedger(loads: loadCount)
var configuration = CurlTransport.Configuration(proxy: .none)
configuration.connectionPool.maxConnectionsPerHost = concurrency
let transport = CurlTransport(configuration: configuration)
let proxy = APIProxy(transport: transport, observers: [ledger])
registry.setAuthenticator(makeAuthenticator(proxy: proxy, registry: registry), for: ["shop-account"])
print("Soak: \(loadCount) loads, \(concurrency) at a time; servers in process \(servers.process.processIdentifier): demo shop \(servers.shop), faults :\(servers.faults), stalled TLS :\(servers.stall)")

// Every 20,000 loads the shop forgets its tokens: account loads refresh theirs while others wait.
let expireTokens: @Sendable () -> Void = { [input = servers.input.fileHandleForWriting] in input.write(Data("expire\n".utf8)) }

let started = ContinuousClock.now
let next = Atomic<Int>(0)
let workers = Task {
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                let worker = SoakWorker(proxy: proxy, registry: registry, ledger: ledger)
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < loadCount else { return }
                    if index > 0 && index.isMultiple(of: 20_000) { expireTokens() }
                    await worker.run(index)
                }
            }
        }
    }
}
// Every load finished — or the time limit passed, and the report counts those missing.
await ledger.allFinished(within: started + timeLimit - ContinuousClock.now)
let seconds = (ContinuousClock.now - started) / .seconds(1)
workers.cancel()
// The loads run on the transport's thread, and its shutdown returns once that thread has run
// everything it ever will: a late second ending, if there were any, is counted by then; and the
// transport's descriptors (its connections, its epoll set and wake-up eventfd) are closed.
transport.shutdown()
let descriptorsAfter = openDescriptorCount()

let report = ledger.report()
print("OUTCOMES " + report.outcomes.sorted { $0.value > $1.value }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
let wrongOutcomes = report.wrong.values.reduce(0, +)
if wrongOutcomes > 0 {
    print("WRONG " + report.wrong.sorted { $0.value > $1.value }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
}
print("ATTEMPTS sent=\(report.attempts) retries=\(report.retries) credential-renewals=\(report.renewals)")
print("RSS-MIB " + report.residentMiB.map { "\($0.loads / 1000)k:\(String(format: "%.1f", $0.mib))" }.joined(separator: " "))
print(String(format: "RATE loads/s=%.0f seconds=%.1f", Double(report.ended) / seconds, seconds))
print(String(format: "TIMEOUTS late-ms p50=%.0f p99=%.0f max=%.0f count=%d",
    report.lateness(at: 0.5), report.lateness(at: 0.99), report.timeoutLateness.last ?? 0, report.timeoutLateness.count))
let rssFirst = report.residentMiB.first?.mib ?? 0
let rssLast = report.residentMiB.last?.mib ?? 0
let leaked = max(0, descriptorsAfter - descriptorsBefore)
print(String(format: "SOAK loads=%d missing=%d duplicated=%d wrong-outcomes=%d rss-first-mib=%.1f rss-last-mib=%.1f fds-leaked=%d",
    loadCount, report.missing, report.duplicated, wrongOutcomes, rssFirst, rssLast, leaked))
var failures: [String] = []
if report.missing > 0 { failures.append("\(report.missing) loads never ended") }
if report.duplicated > 0 { failures.append("\(report.duplicated) loads ended more than once") }
if wrongOutcomes > 0 { failures.append("\(wrongOutcomes) loads ended in an outcome their server cannot give (WRONG above)") }
// A total timeout is told when it is due: at the 99th percentile within a quarter of a second.
if report.lateness(at: 0.99) > 250 { failures.append(String(format: "total timeouts told late: p99 %.0f ms past their limit", report.lateness(at: 0.99))) }
if leaked > 0 { failures.append("\(leaked) descriptors still open (\(descriptorsBefore) before, \(descriptorsAfter) after)") }
// Flat: the last sample within 16 MiB of the first, which is taken after 10,000 loads.
if rssLast > rssFirst + 16 { failures.append(String(format: "resident memory grew from %.1f MiB to %.1f MiB", rssFirst, rssLast)) }
servers.stop()
if !failures.isEmpty {
    print("FAILED: " + failures.joined(separator: "; "))
    exit(1)
}

// MARK: - The servers

/// `--serve`: the demo shop (which forgets its tokens at each line `expire` on its standard
/// input, so that account loads refresh them while the others wait), the fault server and the
/// stalled port; prints `PORTS shop=… faults=… stall=…` and serves until its standard input
/// closes.
func serve() async throws -> Never {
    let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let tokens = ShopTokens()
    let shop = try await DemoShopServer.start(environment: .online, tokens: tokens)
    let faults = try await FaultServer(group: eventLoops)
    let stall = try await FaultServer(group: eventLoops, silent: true)
    FileHandle.standardOutput.write(Data("PORTS shop=\(shop.port) faults=\(faults.port) stall=\(stall.port)\n".utf8))
    // The parent holds the other end of standard input: end of file means it is gone.
    _ = await Task.detached {
        while let line = readLine() {
            if line == "expire" { tokens.expireAll() }
        }
    }.value
    exit(0)
}

/// The server process and its ports.
struct ServerProcess {
    let process: Process
    let input: Pipe
    let shop: URL
    let faults: Int
    let stall: Int

    static func start() throws -> ServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--serve"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw SoakError("the server process ended before naming its ports") }
            line.append(chunk)
        }
        var ports: [String: Int] = [:]
        for field in String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace).dropFirst() {
            let parts = field.split(separator: "=")
            if parts.count == 2, let port = Int(parts[1]) { ports[String(parts[0])] = port }
        }
        guard let shop = ports["shop"], let faults = ports["faults"], let stall = ports["stall"] else {
            throw SoakError("the server process printed no ports: \(String(decoding: line, as: UTF8.self))")
        }
        return ServerProcess(process: process, input: input, shop: URL(string: "http://127.0.0.1:\(shop)")!, faults: faults, stall: stall)
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

struct SoakError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - The loads

/// What each load asks for; a load's index picks its kind (the table's shares are per 100).
enum LoadKind: CaseIterable {
    /// A signed catalogue read (60): one in twenty asks for goods that do not exist (404).
    case goods
    /// The account, with a bearer token from the shop's token endpoint (5): refreshed when the
    /// shop has forgotten it.
    case account
    /// Fault server answers (35): plain, flaky (retried), 503 (retried, then failed), reset
    /// mid-body, a garbage status line, a truncated chunked body, slower than the timeout.
    case faultOK, sometimes, unavailable, reset, garbage, truncated, slow
    /// A TLS handshake that never answers (2): ends at the connect timeout.
    case stalledTLS
    /// A catalogue read cancelled at a random point of its life (1).
    case cancelled

    init(index: Int) {
        switch index % 100 {
        case 0..<60: self = .goods
        case 60..<65: self = .account
        case 65..<72: self = .faultOK
        case 72..<78: self = .sometimes
        case 78..<81: self = .unavailable
        case 81..<85: self = .reset
        case 85..<89: self = .garbage
        case 89..<93: self = .truncated
        case 93..<97: self = .slow
        case 97..<99: self = .stalledTLS
        default: self = .cancelled
        }
    }

    func parameters(_ index: Int) -> Parameters {
        switch self {
        case .goods, .cancelled: ["id": .integer(index % 20 == 0 ? 5_000 : index % 1_003 + 1)]
        default: [:]
        }
    }

    func manager(proxy: APIProxy, registry: ServiceRegistry) -> APIManager<NoContent> {
        func endpoint(_ service: ServiceName, _ path: String) -> APIManager<NoContent> {
            APIManager(Endpoint<NoContent>(service: service, path: path), proxy: proxy, registry: registry)
        }
        return switch self {
        case .goods, .cancelled: endpoint("shop", "goods/{id}")
        case .account: endpoint("shop-account", "account")
        case .faultOK: endpoint("faults", "ok")
        case .sometimes: endpoint("faults", "sometimes")
        case .unavailable: endpoint("faults", "status/503")
        case .reset: endpoint("faults", "reset")
        case .garbage: endpoint("faults", "garbage")
        case .truncated: endpoint("faults", "truncated")
        case .slow: endpoint("faults", "slow")
        case .stalledTLS: endpoint("stalled", "ok")
        }
    }
}

/// One of the `concurrency` loops: runs loads one after another, the even ones through the async
/// face, the odd ones through the delegate face, each manager kept for the worker's next loads.
final class SoakWorker: APIManagerDelegate, @unchecked Sendable {
    // `@unchecked Sendable`: the managers are touched by the worker's own task only; `waiting`
    // is behind its mutex (the delegate is called on the load's thread).
    private let proxy: APIProxy
    private let registry: ServiceRegistry
    private let ledger: SoakLedger
    private var managers: [LoadKind: APIManager<NoContent>] = [:]
    private let waiting = Mutex<[LoadID: Waiting]>([:])

    /// Where a delegate-face load stands between `loadData` and its callback.
    private enum Waiting {
        /// The worker waits to be resumed.
        case worker(CheckedContinuation<Void, Never>)
        /// The delegate was told before the worker filed its continuation.
        case heard
    }

    init(proxy: APIProxy, registry: ServiceRegistry, ledger: SoakLedger) {
        self.proxy = proxy
        self.registry = registry
        self.ledger = ledger
    }

    func run(_ index: Int) async {
        let kind = onlyKind ?? LoadKind(index: index)
        let manager = managers[kind] ?? kind.manager(proxy: proxy, registry: registry)
        managers[kind] = manager
        let parameters = kind.parameters(index)
        if kind == .cancelled {
            let load = Task { try await manager.load(parameters) }
            // Cancelled at a random point of its life: after 0 to 63 turns of the other tasks.
            for _ in 0..<Int.random(in: 0..<64) { await Task.yield() }
            load.cancel()
            _ = await load.result
        } else if index.isMultiple(of: 2) {
            _ = try? await manager.load(parameters)
        } else {
            manager.delegate = self
            manager.callbackExecutor = .immediate
            await withCheckedContinuation { continuation in
                // The delegate may be told before `loadData` returns; it then leaves a mark.
                let id = manager.loadData(with: parameters)
                let early = waiting.withLock { waiting -> Bool in
                    if case .heard? = waiting.removeValue(forKey: id) { return true }
                    waiting[id] = .worker(continuation)
                    return false
                }
                if early { continuation.resume() }
            }
        }
        ledger.finished()
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        heard(response.loadID)
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        heard(error.loadID)
    }

    /// Counts the call, and resumes the worker waiting for `id` or leaves a mark for it when the
    /// delegate came first.
    private func heard(_ id: LoadID) {
        ledger.noteDelegateCall(id)
        let worker = waiting.withLock { waiting -> CheckedContinuation<Void, Never>? in
            if case .worker(let continuation)? = waiting.removeValue(forKey: id) { return continuation }
            waiting[id] = .heard
            return nil
        }
        worker?.resume()
    }
}
