import AIFNetworking
import DemoServer
import Foundation
import ProcessResources
import Synchronization

/// What the soak's loads did: an observer of the proxy (every load's endings, counted by its
/// load ID, and its outcome), the delegate calls, the loads the workers finished, and the
/// resident memory after every 10,000 of them. Its table is sized up front, so that it does not
/// grow while memory is measured.
final class SoakLedger: APIProxy.LoadObserver {
    private struct Entry {
        var endings = 0
        var delegateCalls = 0
    }

    private struct State {
        var entries: [LoadID: Entry]
        var outcomes: [String: Int] = [:]
        /// Loads that ended in an outcome their endpoint cannot give, by `endpoint:outcome`.
        var wrong: [String: Int] = [:]
        var attempts = 0
        var retries = 0
        var renewals = 0
        /// How late each attempt that ended in a total timeout was told, in milliseconds past
        /// its limit (counted from just before it was signed).
        var timeoutLateness: [Double] = []
        var finished = 0
        var residentMiB: [(loads: Int, mib: Double)] = []
    }

    /// The soak's figures.
    struct Report {
        var ended: Int
        var missing: Int
        var duplicated: Int
        var outcomes: [String: Int]
        /// Loads that ended in an outcome their endpoint cannot give (``Expectation``), by
        /// `service/method:outcome`.
        var wrong: [String: Int]
        var attempts: Int
        var retries: Int
        var renewals: Int
        /// Sorted, in milliseconds.
        var timeoutLateness: [Double]
        var residentMiB: [(loads: Int, mib: Double)]

        /// The lateness at quantile `q` (0…1), or 0 without timeouts.
        func lateness(at q: Double) -> Double {
            timeoutLateness.isEmpty ? 0 : timeoutLateness[min(timeoutLateness.count - 1, Int(Double(timeoutLateness.count) * q))]
        }
    }

    private let loads: Int
    private let state: Mutex<State>
    /// Given as the workers finish the last load.
    private let lastFinished = OnceSignal()

    init(loads: Int) {
        self.loads = loads
        // Filled once and emptied, keeping its capacity: every page of the table is resident
        // before the first load, so that its growth is not counted as the library's.
        var entries: [LoadID: Entry] = [:]
        entries.reserveCapacity(loads + loads / 2)
        for index in 0..<UInt64(loads + loads / 2) { entries[LoadID(rawValue: .max - index)] = Entry() }
        entries.removeAll(keepingCapacity: true)
        state = Mutex(State(entries: entries))
    }

    func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? {
        state.withLock { $0.entries[load.loadID] = Entry() }
        return Observation(ledger: self, id: load.loadID, expectation: Expectation(service: load.service.rawValue, path: load.path))
    }

    /// A worker finished a load (its `load()` returned, or its delegate was told).
    func finished() {
        let finished = state.withLock { state -> Int in
            state.finished += 1
            return state.finished
        }
        if finished == loads { lastFinished.give() }
        if finished % 10_000 == 0 {
            let mib = residentMiB()
            state.withLock { $0.residentMiB.append((finished, mib)) }
            print("SOAK-PROGRESS loads=\(finished) rss-mib=\(String(format: "%.1f", mib))")
        }
    }

    /// How many loads the workers finished.
    var ended: Int {
        state.withLock { $0.finished }
    }

    /// Returns once the workers have finished every load, or when `limit` passes first.
    func allFinished(within limit: Duration) async {
        await lastFinished.wait(atMost: limit)
    }

    func noteDelegateCall(_ id: LoadID) {
        state.withLock { $0.entries[id, default: Entry()].delegateCalls += 1 }
    }

    private func note(_ id: LoadID, _ change: (inout State, inout Entry) -> Void) {
        state.withLock { state in
            var entry = state.entries[id] ?? Entry()
            change(&state, &entry)
            state.entries[id] = entry
        }
    }

    func report() -> Report {
        state.withLock { state in
            let neverEnded = state.entries.values.count { $0.endings == 0 }
            let twice = state.entries.values.count { $0.endings > 1 || $0.delegateCalls > 1 }
            return Report(
                ended: state.finished, missing: max(0, loads - state.finished) + neverEnded, duplicated: twice, outcomes: state.outcomes, wrong: state.wrong,
                attempts: state.attempts, retries: state.retries, renewals: state.renewals,
                timeoutLateness: state.timeoutLateness.sorted(), residentMiB: state.residentMiB)
        }
    }

    private final class Observation: APIProxy.LoadObservation {
        let ledger: SoakLedger
        let id: LoadID
        let expectation: Expectation
        /// When the attempt under way was about to be signed.
        private let attemptStart = Mutex<ContinuousClock.Instant?>(nil)

        init(ledger: SoakLedger, id: LoadID, expectation: Expectation) {
            self.ledger = ledger
            self.id = id
            self.expectation = expectation
        }

        func attemptWillStart(_ attempt: Int) {
            attemptStart.withLock { $0 = .now }
        }

        func attemptDidEnd(_ attempt: ObservedLoad.Attempt) {
            var lateness: Double?
            if case .failure(let error as TransportError) = attempt.result, error.code == .totalTimeout,
                let limit = attempt.request.timeouts?.total, let start = attemptStart.withLock({ $0 })
            {
                lateness = (ContinuousClock.now - start - limit) / .milliseconds(1)
            }
            ledger.note(id) { state, _ in
                state.attempts += 1
                if let lateness { state.timeoutLateness.append(lateness) }
            }
        }

        func loadWillRetry(_ retry: RetryPolicy.Attempt) {
            ledger.note(id) { state, _ in state.retries += 1 }
        }

        func loadWillRenewCredential() {
            ledger.note(id) { state, _ in state.renewals += 1 }
        }

        func loadDidEnd(_ outcome: ObservedLoad.Outcome) {
            ledger.note(id) { state, entry in
                entry.endings += 1
                guard entry.endings == 1 else { return }
                let name = if let status = outcome.error?.statusCode { "http_\(status)" } else { outcome.outcomeClass }
                state.outcomes[name, default: 0] += 1
                if !expectation.allows(name) { state.wrong["\(expectation.endpoint):\(name)", default: 0] += 1 }
            }
        }
    }
}

/// What a soak load may end with, by its endpoint (see ``LoadKind`` and ``FaultServer``): an
/// answer the server gives, or the failure it provokes. Anything else is a wrong outcome — such
/// as a timeout from a server that answered at once, which is what libcurl 7.88's own timers
/// made of a reset or a `503` under load — and fails the soak.
struct Expectation {
    /// `service/method`.
    let endpoint: String
    private let allowed: Set<String>?

    init(service: String, path: String) {
        endpoint = "\(service)/\(path)"
        allowed = switch endpoint {
        // One in twenty asks for goods that do not exist; the `cancelled` kind's loads end
        // cancelled, or answered when the answer came first.
        case "shop/goods/{id}": ["success", "http_404", "cancelled"]
        case "shop-account/account", "shop/auth/token", "faults/ok": ["success"]
        // One answer in two is a 503, and two retries may all meet one.
        case "faults/sometimes": ["success", "http_503"]
        case "faults/status/503": ["http_503"]
        // Two seconds to answer, against a one-second limit; a TLS handshake never answered.
        case "faults/slow", "stalled/ok": ["timeout"]
        // A reset mid-body, a garbage status line, a truncated chunk: whatever failure libcurl
        // names, but neither a success nor a timeout (nil: checked below).
        default: nil
        }
    }

    func allows(_ outcome: String) -> Bool {
        if let allowed { return allowed.contains(outcome) }
        return outcome != "success" && outcome != "timeout" && outcome != "cancelled"
    }
}

/// The shop from `Configs/shop.json` (twice: `shop-account` is for the loads that carry a bearer
/// token, see ``makeAuthenticator(proxy:registry:)``), the fault server and the stalled TLS port.
func makeRegistry(shop: URL, faults: Int, stall: Int) throws -> ServiceRegistry {
    let registry = ServiceRegistry(processEnvironment: [:])
    let configs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Configs")
    let environment = [
        "SHOP_ONLINE_URL": shop.absoluteString, "SHOP_OFFLINE_URL": shop.absoluteString,
        "SHOP_PUBLIC_KEY": ShopRoutes.publicKey, "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
    ]
    let text = try String(contentsOf: configs.appending(path: "shop.json"), encoding: .utf8)
    registry.register(try ServiceRegistry.ConfiguredService.parse(Data(text.utf8), file: "shop.json", environment: environment))
    let renamed = text.replacingOccurrences(of: #""name": "shop""#, with: #""name": "shop-account""#)
    registry.register(try ServiceRegistry.ConfiguredService.parse(Data(renamed.utf8), file: "shop-account.json", environment: environment))
    registry.register(FaultService(name: "faults", baseURL: URL(string: "http://127.0.0.1:\(faults)")!))
    registry.register(FaultService(name: "stalled", baseURL: URL(string: "https://127.0.0.1:\(stall)")!))
    return registry
}

/// `shop-account`'s bearer tokens, from the shop's token endpoint through `proxy`; refreshed
/// when the shop refuses one.
func makeAuthenticator(proxy: APIProxy, registry: ServiceRegistry) -> Authenticator {
    let tokenEndpoint = Endpoint<TokenGrant>(service: "shop", path: "auth/token", method: .post, usesAuthenticator: false)
    return Authenticator {
        let grant = try await APIManager(tokenEndpoint, proxy: proxy, registry: registry).load().content
        return Authenticator.Credential(token: grant.accessToken, validFor: .seconds(grant.expiresIn))
    }
}

/// The fault server (or the stalled port): unsigned, a one-second limit on each load (half a
/// second to connect), two quick retries.
struct FaultService: Service {
    var name: ServiceName
    var environments: [ServiceEnvironment.Name: ServiceEnvironment]
    var signer: (any RequestSigner)? { nil }
    var timeouts: HTTPRequest.Timeouts? { HTTPRequest.Timeouts(connect: .milliseconds(500), total: .seconds(1), idle: .seconds(1)) }
    var retryPolicy: RetryPolicy { RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(5), maxDelay: .milliseconds(50)) }

    init(name: ServiceName, baseURL: URL) {
        self.name = name
        environments = [.online: ServiceEnvironment(baseURL: baseURL)]
    }
}
