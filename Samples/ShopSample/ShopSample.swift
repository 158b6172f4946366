import AIFNetworking
import AIFNetworkingTesting
import AIFNetworkingYAML
import DemoServer
import Foundation
import Synchronization

/// The shop sample: starts the demo shop (an online and an offline instance) on loopback,
/// defines the service from `Configs/shop.json`, and walks through the manager API — and, last,
/// through the same managers answered from fixtures by the service's mock environment.
///
/// `ShopSample --mock` runs the chapters that need no server control from the fixtures in
/// `Configs/fixtures/shop` alone, no server started; `ShopSample --record DIR` runs them against
/// the demo shop and records every response as a fixture under `DIR` (that is how
/// `Configs/fixtures/shop` was made: `swift run ShopSample --record Configs/fixtures`).
@main
struct ShopSample {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case nil: try await runEveryChapter()
        case "--mock" where arguments.count == 1: try await runFromFixtures()
        case "--record" where arguments.count == 2: try await record(into: URL(filePath: arguments[1], directoryHint: .isDirectory))
        default:
            FileHandle.standardError.write(Data("usage: ShopSample [--mock | --record DIR]\n".utf8))
            exit(2)
        }
    }

    /// Every chapter, against the demo shop servers started here, then a short one in mock mode.
    static func runEveryChapter() async throws {
        let tokens = ShopTokens()
        let faults = ShopFaults()
        let online = try await DemoShopServer.start(environment: .online, faults: faults, tokens: tokens)
        let offline = try await DemoShopServer.start(environment: .offline)
        try registerShop(onlineURL: online.baseURL(), offlineURL: offline.baseURL())
        print("Demo shop online at \(online.baseURL()), offline at \(offline.baseURL())\n")

        try await replayableChapters()
        try await callAPIsDefinedByName()
        try await callATypedInterface()
        try await retryAFlakyEndpoint()
        try await refreshATokenOnceForABurst(tokens)
        try await switchToOffline()
        try await downloadAnExportCutMidway(faults)
        let restarted = try await loseTheNetworkAndComeBack(online, tokens: tokens)
        try await answerFromFixtures()

        await restarted.stop()
        await offline.stop()
    }

    /// The chapters a mock environment can answer, from `Configs/fixtures/shop`: no server.
    static func runFromFixtures() async throws {
        let unused = URL(string: "http://127.0.0.1:9")!
        try registerShop(onlineURL: unused, offlineURL: unused)
        ServiceRegistry.shared.setEnvironment(.mock, for: .shop)
        print("Every load below is answered by the mock environment from Configs/fixtures/shop: no server runs.\n")
        try await replayableChapters()
        try await retryInjectedFailures()
    }

    /// The chapters ``runFromFixtures()`` replays, against the demo shop, every response
    /// recorded as a fixture under `directory`.
    static func record(into directory: URL) async throws {
        let online = try await DemoShopServer.start(environment: .online)
        try registerShop(onlineURL: online.baseURL(), offlineURL: online.baseURL())
        try APIProxy.setShared(APIProxy(recorder: FixtureTransport.Recorder(directory: directory)))
        print("Recording every response under \(directory.path)\n")
        try await replayableChapters()
        await online.stop()
    }

    /// The chapters a mock environment can answer — those that need no control of the server —
    /// and so the ones `--record` records.
    static func replayableChapters() async throws {
        try await pageThroughTheListing()
        try await showDetails()
        await openAScreen()
        try await placeAnOrder()
        await showFailures()
    }

    /// Registers the services of `Configs/`, the shop's URLs and demo keys as the variables.
    static func registerShop(onlineURL: URL, offlineURL: URL) throws {
        let variables = [
            "SHOP_ONLINE_URL": onlineURL.absoluteString,
            "SHOP_OFFLINE_URL": offlineURL.absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey,
            "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ]
        let configs = try configsFolder()
        let registered = try ServiceRegistry.shared.registerServices(inDirectory: configs, environment: variables)
        // Configs/ defines APIs in JSON (shop.apis.json) and in YAML (shop-orders.apis.yaml).
        let defined = try ServiceRegistry.shared.registerAPIs(inDirectory: configs, environment: variables, formats: [YAMLDefineFormat()])
        print("Services from \(configs.lastPathComponent)/: \(registered.map(\.rawValue).joined(separator: ", ")); APIs defined by name: \(defined.joined(separator: ", "))")
    }

    /// The delegate face: a param source and a delegate drive a paged manager to the end.
    static func pageThroughTheListing() async throws {
        print("== Paging through the listing (delegate face, 50 a page) ==")
        let list = GoodsListManager()
        let printer = ListingPrinter()
        list.delegate = printer
        list.paramSource = printer
        let pages = try await printer.run(list)
        print("   \(pages) pages, \(list.pagingState.loadedItems) goods, last page reached: \(list.isLastPage)\n")
    }

    /// The APIs of `Configs/shop.apis.json` and `Configs/shop-orders.apis.yaml`, called by name:
    /// into a type, and into JSON.
    static func callAPIsDefinedByName() async throws {
        print("== APIs defined by name (Configs/shop.apis.json, and the orders' Configs/shop-orders.apis.yaml) ==")
        let page = try await api("goods.list").load(["page": 3, "page_size": 4], as: [Goods].self)
        print("   goods.list, page 3 of 4: \(page.content.map { "\($0.id) \($0.title)" }.joined(separator: "; "))")
        let order = try await api("orders.place").load(body: ["goods_id": 12, "quantity": 1], as: Order.self)
        print("   orders.place → \(order.statusCode): order \(order.content.id), \(order.content.status)")
        let raw = try await api("orders.detail").load(["id": .integer(order.content.id)])
        print("   orders.detail as JSON: quantity \(raw.content["quantity"]?.intValue ?? 0), status \(raw.content["status"]?.stringValue ?? "?")")
        _ = try await api("orders.cancel").load(["id": .integer(order.content.id)], as: NoContent.self)
        print("   orders.cancel → deleted\n")
    }

    /// The shop as a typed interface (`ShopAPI.swift`); then one endpoint declared each of the
    /// four ways — a subclass, a value, an interface, a define — and called.
    static func callATypedInterface() async throws {
        print("== A typed interface (ShopAPI.swift) ==")
        let shop = ShopAPIClient()
        let page = try await shop.goods(page: 2, pageSize: 3)
        print("   goods(page: 2, pageSize: 3): \(page.items.map { "\($0.id) \($0.title)" }.joined(separator: "; "))")
        let order = try await shop.place(OrderDraft(goodsId: 12, quantity: 3))
        print("   place(_:) → order \(order.id): goods \(order.goodsId) × \(order.quantity), \(order.status)")
        try await shop.cancel(order: order.id)
        print("   cancel(order: \(order.id)) → done")

        let bySubclass = try await GoodsDetailManager().load(["id": 42]).content
        let byValue = try await APIManager(Endpoint<Goods>(service: .shop, path: "goods/{id}")).load(["id": 42]).content
        let byInterface = try await shop.goods(id: 42)
        let byDefine = try await api("goods.detail").load(["id": 42], as: Goods.self).content
        let answers = [bySubclass, byValue, byInterface, byDefine]
        print("   goods 42 by a subclass, a value, an interface and a define: \(Set(answers).count == 1 ? "the same \"\(byInterface.title)\" each way" : "DIFFERENT: \(answers)")\n")
    }

    /// A reformer turns a response into a catalogue line; the second load comes from the cache.
    static func showDetails() async throws {
        print("== Goods detail through a reformer (async face, cached) ==")
        let detail = GoodsDetailManager()
        for _ in 0..<2 {
            _ = try await detail.load(["id": 42])
            print("   " + (detail.lastOutcome(reformedBy: GoodsCardReformer()) ?? "nothing loaded"))
        }
        print()
    }

    /// A main-actor screen as param source and delegate of its manager, typed.
    @MainActor
    static func openAScreen() async {
        print("== A screen on the main actor (delegate face, typed) ==")
        let screen = GoodsScreen(goodsID: 12)
        await screen.open()
        print("   goods 12: \(screen.title)")
        screen.goodsID = -3
        await screen.open()
        print("   goods -3: \(screen.title)\n")
    }

    /// Create, change and delete an order with JSON bodies.
    static func placeAnOrder() async throws {
        print("== An order: create, update, delete ==")
        let created = try await CreateOrderManager().load(["goods": 7, "quantity": 2])
        print("   POST orders → \(created.statusCode): order \(created.content.id), goods \(created.content.goodsId) × \(created.content.quantity), \(created.content.status)")
        let updated = try await UpdateOrderManager().load(["id": .integer(created.content.id), "quantity": 5])
        print("   PUT orders/\(updated.content.id) → \(updated.statusCode): quantity \(updated.content.quantity), \(updated.content.status)")
        let deleted = try await DeleteOrderManager().load(["id": .integer(created.content.id)])
        print("   DELETE orders/\(created.content.id) → \(deleted.statusCode), no content\n")
    }

    /// What failures look like: a validation failure (nothing sent), a cancelled request (no
    /// delegate call), a service veto on an application error code in a 200 body, a 404.
    static func showFailures() async {
        print("== Failures ==")
        do {
            _ = try await GoodsDetailManager().load(["id": -1])
        } catch {
            print("   validation: \(error.kind) — \(error.message)")
        }

        let slow = SlowManager()
        let watcher = CancellationWatcher()
        slow.plugins = [watcher]
        slow.delegate = watcher
        let id = slow.loadData(with: ["ms": 5000])
        try? await Task.sleep(for: .milliseconds(100))
        slow.cancelLoad(id)
        let seen = await watcher.outcome()
        print("   cancelled: load \(id) — \(seen)")

        do {
            _ = try await CouponManager().load(["code": "SPRING"])
        } catch {
            print("   service veto: \(error.kind) \(error.serviceVeto?.code ?? "") — \(error.message)")
        }
        let coupon = try? await CouponManager().load(["code": "WELCOME10"])
        print("   a valid coupon: \(coupon.map { "\($0.content.coupon), \($0.content.discountPercent)% off" } ?? "none")")

        do {
            _ = try await GoodsDetailManager().load(["id": 5000])
        } catch {
            print("   not found: \(error.kind) \(error.statusCode.map(String.init) ?? "") — \(error.message)")
        }
        print()
    }

    /// The shop's retry policy (`Configs/shop.json`) at work: a load answered 503 is sent again
    /// after a short random wait; one answered 429 with `Retry-After: 1` waits that second.
    /// Every attempt is signed afresh (the shop checks each signature and reports each nonce).
    static func retryAFlakyEndpoint() async throws {
        print("== Retries: a flaky endpoint ==")
        let flaky = APIManager(Endpoint<FlakyReport>(service: .shop, path: "flaky/sample"))
        let started = ContinuousClock.now
        let first = try await flaky.load(["failures": 1])
        print("   503 once, then 200: \(first.attempts) attempts, \(Set(first.content.nonces).count) distinct nonces")
        let second = APIManager(Endpoint<FlakyReport>(service: .shop, path: "flaky/sample-429"))
        let answer = try await second.load(["failures": 1, "status": 429, "retry_after": 1])
        let waited = ContinuousClock.now - started
        print("   429 with Retry-After: 1, then 200: \(answer.attempts) attempts in \(waited.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))\n")
    }

    /// An authenticator on the shop service: the first load gets a token; after the shop
    /// expires every token, a burst of 20 loads meets 401s — one refresh serves them all, and
    /// each load is sent once more with the new token.
    static func refreshATokenOnceForABurst(_ tokens: ShopTokens) async throws {
        print("== One token refresh for a burst ==")
        let tokenEndpoint = Endpoint<TokenGrant>(service: .shop, path: "auth/token", method: .post, usesAuthenticator: false)
        let session = Authenticator {
            let grant = try await APIManager(tokenEndpoint).load().content
            return Authenticator.Credential(token: grant.accessToken, validFor: .seconds(grant.expiresIn))
        }
        ServiceRegistry.shared.setAuthenticator(session, for: [.shop])
        defer { ServiceRegistry.shared.setAuthenticator(nil, for: [.shop]) }
        let account = Endpoint<Account>(service: .shop, path: "account")
        let first = try await APIManager(account).load()
        print("   signed in as \(first.content.user): \(tokens.issued) token issued")
        tokens.expireAll()
        let attempts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { try await APIManager(account).load().attempts } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        print("   every token expired; 20 loads at once: \(attempts.count) succeeded, \(tokens.refreshAttempts - 1) refresh, each sent \(Set(attempts).sorted().map(String.init).joined(separator: "/")) times\n")
    }

    /// The same managers against the offline environment's data.
    static func switchToOffline() async throws {
        print("== Switching the shop service to offline ==")
        ServiceRegistry.shared.setEnvironment(.offline, for: .shop)
        let list = GoodsListManager()
        var titles: [String] = []
        for try await page in list.pages() {
            titles += page.content.items.map(\.title)
        }
        print("   offline listing: \(titles.count) goods: \(titles.prefix(3).joined(separator: ", ")), …")
        let detail = try await GoodsDetailManager().load(["id": 2])
        print("   offline goods 2: \(detail.content.title), \(detail.content.priceCents) cents\n")
        ServiceRegistry.shared.setEnvironment(nil, for: .shop)
    }

    /// A download as a manager load: the shop cuts its first answer after 1 MiB; the service's
    /// retry asks, signed, for the rest only (`Range` and `If-Range` from the first answer's
    /// `ETag`), and the file lands whole. Paced at 4 MiB/s so that the progress shows.
    static func downloadAnExportCutMidway(_ faults: ShopFaults) async throws {
        print("== Downloading a file, cut mid-way and resumed ==")
        let folder = FileManager.default.temporaryDirectory.appending(path: "aif-shop-sample-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        faults.cutNextExport(after: 1 << 20)
        let exports = APIManager(Endpoint<NoContent>(service: .shop, path: "exports/{name}"))
        let nextQuarter = Atomic(1)
        let file = try await exports.download(
            ["name": "catalogue.csv"], to: FileDownload(to: folder.appending(path: "catalogue.csv")), control: TransferControl(maxBytesPerSecond: 4 << 20)
        ) { progress in
            // A line at each quarter of the file.
            guard let fraction = progress.fractionCompleted else { return }
            let next = nextQuarter.load(ordering: .relaxed)
            let quarter = Int(fraction * 4)
            guard fraction >= Double(next) / 4,
                nextQuarter.compareExchange(expected: next, desired: quarter + 1, ordering: .relaxed).exchanged
            else { return }
            let rate = progress.bytesPerSecond.map { String(format: ", %.1f MiB/s", $0 / 1_048_576) } ?? ""
            print("   \(quarter * 25)%: \(progress.bytesReceived) of \(progress.totalBytesToReceive ?? 0) bytes\(rate)")
        }
        let lines = try String(contentsOf: file.url, encoding: .utf8).split(separator: "\n").count
        print("   \(file.url.lastPathComponent): \(file.byteCount) bytes, \(lines) lines; \(file.resumedAt) of them kept from the cut answer, "
            + "the rest asked for with Range: bytes=\(file.resumedAt)-\n")
    }

    /// The proxy's connectivity, learned from real requests: the online shop stops (every
    /// connection refused, as with no network), the next page fails after its retries and the
    /// proxy is offline; the sample pauses paging and tries a cheap load every quarter second
    /// until one gets a response — the shop is back on its port a second later — then asks
    /// for the same page again.
    static func loseTheNetworkAndComeBack(_ server: LocalServer, tokens: ShopTokens) async throws -> LocalServer {
        print("== The network goes away and comes back ==")
        let proxy = APIProxy.shared
        let changes = Task {
            var seen: [APIProxy.Connectivity] = []
            for await state in proxy.connectivityChanges() {
                seen.append(state)
                if seen.count == 3 { break }
            }
            return seen
        }
        var pages = GoodsListManager().pages().makeAsyncIterator()
        _ = try await pages.next()
        print("   page 1 loaded; the proxy is \(proxy.connectivity)")
        await server.stop()
        do {
            _ = try await pages.next()
        } catch {
            print("   page 2: \(error.kind) after \(error.attempts) attempts; the proxy is \(proxy.connectivity) — paging paused")
        }
        let back = Task {
            try await Task.sleep(for: .seconds(1))
            return try await DemoShopServer.start(environment: .online, tokens: tokens, port: server.port)
        }
        let ping = APIManager(Endpoint<NoContent>(service: .shop, path: "status", retryPolicy: .never))
        var probes = 0
        while proxy.connectivity == .offline, probes < 40 {
            try await Task.sleep(for: .milliseconds(250))
            probes += 1
            _ = try? await ping.load()
        }
        let restarted = try await back.value
        let page = try await pages.next()
        print("   \(probes) probes later the proxy is \(proxy.connectivity); page 2 again: \(page?.content.items.count ?? 0) goods")
        changes.cancel()
        print("   changes heard: \(await changes.value.map(\.description).joined(separator: " → "))\n")
        return restarted
    }

    /// The mock environment's injected failures (5% of loads, seeded, in `Configs/shop.json`)
    /// met by the service's retry policy, as a real server's would be.
    static func retryInjectedFailures() async throws {
        print("== Injected failures, retried as the service says ==")
        let detail = APIManager(Endpoint<Goods>(service: .shop, path: "goods/{id}"))
        var attempts: [Int] = []
        for _ in 0..<60 {
            attempts.append(try await detail.load(["id": 42]).attempts)
        }
        let retried = attempts.filter { $0 > 1 }.count
        print("   60 loads of goods 42, all answered; sent again after an injected failure: \(retried) (\(attempts.reduce(0, +)) attempts in all)\n")
    }

    /// The last chapter of the full run: the same managers, switched to the service's mock
    /// environment, answered from `Configs/fixtures/shop`.
    static func answerFromFixtures() async throws {
        print("== The same managers, answered from fixtures (the mock environment) ==")
        ServiceRegistry.shared.setEnvironment(.mock, for: .shop)
        defer { ServiceRegistry.shared.setEnvironment(nil, for: .shop) }
        var goods = 0
        for try await page in GoodsListManager().pages(["sort": "id"]) {
            goods += page.content.items.count
        }
        print("   listing: \(goods) goods, from Configs/fixtures/shop/goods.GET.json")
        let detail = try await GoodsDetailManager().load(["id": 42])
        print("   goods 42: \(detail.content.title), \(detail.content.priceCents) cents")
        let order = try await CreateOrderManager().load(["goods": 7, "quantity": 2])
        print("   POST orders → \(order.statusCode): order \(order.content.id), \(order.content.status)")
        print("   (swift run ShopSample --mock runs every chapter this way, with no server at all)\n")
    }

    /// `Configs/` in the working directory, or beside this source file's package.
    static func configsFolder() throws -> URL {
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appending(path: "Configs")
        if FileManager.default.fileExists(atPath: here.path) { return here }
        let beside = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appending(path: "Configs")
        guard FileManager.default.fileExists(atPath: beside.path) else { throw SampleError("no Configs/ folder in \(here.path) or \(beside.path)") }
        return beside
    }
}

/// Supplies the listing's filter and prints each page; asks for the next page until the last.
///
/// The delegate hears from the transport's threads, so its state sits behind a lock: an
/// `NSLock` (a pthread mutex), which the thread sanitizer sees, where on Linux it cannot see
/// `Synchronization.Mutex`'s futex-based locking and reports its critical sections as racing.
final class ListingPrinter: APIManagerDelegate, APIManagerParamSource, @unchecked Sendable {
    // @unchecked is safe: every `var` below is read and written only while `lock` is held.
    private let lock = NSLock()
    private var pages = 0
    private var done: CheckedContinuation<Int, any Error>?

    func run(_ list: GoodsListManager) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            lock.withLock { done = continuation }
            list.loadFirstPage()
        }
    }

    func parameters<Content>(for manager: APIManager<Content>) -> Parameters {
        ["sort": "id"]
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        guard let list = manager as? GoodsListManager, let page = response.content as? GoodsPage else { return }
        let pages = lock.withLock {
            self.pages += 1
            return self.pages
        }
        if pages <= 3 || list.isLastPage {
            let ids = page.items.isEmpty ? "none" : "\(page.items.first!.id)–\(page.items.last!.id)"
            print("   page \(page.page): \(page.items.count) goods (ids \(ids)), first: \(page.items.first?.title ?? "-")")
        } else if pages == 4 {
            print("   …")
        }
        if list.loadNextPage() == nil {
            lock.withLock {
                done?.resume(returning: self.pages)
                done = nil
            }
        }
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        lock.withLock {
            done?.resume(throwing: error)
            done = nil
        }
    }
}

/// Sees how the slow request ends: the delegate should hear nothing, the plugin a
/// cancellation. Its state sits behind an `NSLock`, as ``ListingPrinter``'s does.
final class CancellationWatcher: APIManagerDelegate, LoadPlugin, @unchecked Sendable {
    // @unchecked is safe: every `var` below is read and written only while `lock` is held.
    private let lock = NSLock()
    private var seen: String?
    private var waiter: CheckedContinuation<String, Never>?

    func outcome() async -> String {
        await withCheckedContinuation { continuation in
            let earlier = lock.withLock { () -> String? in
                if let seen { return seen }
                waiter = continuation
                return nil
            }
            if let earlier { continuation.resume(returning: earlier) }
        }
    }

    private func record(_ text: String) {
        let waiter = lock.withLock { () -> CheckedContinuation<String, Never>? in
            seen = seen.map { $0 + "; " + text } ?? text
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: text)
    }

    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) {
        record("the plugin saw \(outcome.outcomeClass), the delegate heard nothing")
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        record("unexpected: the delegate heard of a success")
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        record("unexpected: the delegate heard of a failure")
    }
}
