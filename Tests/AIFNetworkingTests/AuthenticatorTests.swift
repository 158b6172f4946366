@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing

/// A demo shop of the test's own whose tokens the test controls, reached as three services
/// (`shop`, `shop-a`, `shop-b`) that share one ``Authenticator``; the refresh is an ordinary
/// manager load of `auth/token`. It has a transport of its own, so that its bursts do not
/// queue other tests' requests behind them.
struct TokenShop: Sendable {
    let tokens: ShopTokens
    /// Told when the tokens' event-stream counters change, and as each load of a manager
    /// ``signalling(_:)`` set up ends.
    let changes: ChangeSignal
    let server: LocalServer
    let transport: CurlTransport
    let stack: ShopStack
    let authenticator: Authenticator
    static let services: [ServiceName] = ["shop", "shop-a", "shop-b"]

    static func make(
        credential: Authenticator.Credential? = nil, expiredApplicationCodes: Set<String> = [], refreshWindow: Duration = .seconds(60),
        refreshTimeout: Duration = .seconds(30), errorPolicies: String? = nil, observers: [any APIProxy.LoadObserver] = [],
        tokenLifetime: Duration = .seconds(300)
    ) async throws -> TokenShop {
        let changes = ChangeSignal()
        let tokens = ShopTokens(lifetime: tokenLifetime, changed: changes.changed)
        let server = try await DemoShopServer.start(environment: .online, tokens: tokens)
        let transport = CurlTransport()
        let stack = try await ShopStack.make(
            onlineURL: server.baseURL(), transport: transport, proxy: { APIProxy(transport: $0, observers: observers) })
        var text = try String(contentsOf: ShopServers.configs.appending(path: "shop.json"), encoding: .utf8)
        if let errorPolicies { text = text.replacingOccurrences(of: #""retry": {"#, with: #""errorPolicies": \#(errorPolicies), "retry": {"#) }
        let environment = [
            "SHOP_ONLINE_URL": server.baseURL().absoluteString, "SHOP_OFFLINE_URL": server.baseURL().absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey, "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ]
        for name in errorPolicies == nil ? Array(services.dropFirst()) : services {
            let renamed = text.replacingOccurrences(of: #""name": "shop""#, with: #""name": "\#(name)""#)
            stack.registry.register(try ServiceRegistry.ConfiguredService.parse(Data(renamed.utf8), file: "\(name).json", environment: environment))
        }
        let tokenEndpoint = Endpoint<TokenGrant>(service: "shop", path: "auth/token", method: .post, usesAuthenticator: false)
        let (proxy, registry) = (stack.proxy, stack.registry)
        let authenticator = Authenticator(
            credential: credential, expiredApplicationCodes: expiredApplicationCodes, refreshTimeout: refreshTimeout, refreshWindow: refreshWindow
        ) {
            let grant = try await APIManager(tokenEndpoint, proxy: proxy, registry: registry).load().content
            return Authenticator.Credential(token: grant.accessToken, validFor: .seconds(grant.expiresIn))
        }
        stack.registry.setAuthenticator(authenticator, for: services)
        return TokenShop(tokens: tokens, changes: changes, server: server, transport: transport, stack: stack, authenticator: authenticator)
    }

    /// `manager`, whose loads tell ``changes`` as they end (its `isLoading` is false by then).
    func signalling<Content>(_ manager: APIManager<Content>) -> APIManager<Content> {
        manager.plugins.append(SignalsEnd(changes: changes))
        return manager
    }

    func account(_ service: ServiceName = "shop", path: String = "account") -> APIManager<Account> {
        APIManager(Endpoint<Account>(service: service, path: path), proxy: stack.proxy, registry: stack.registry, cache: stack.cache)
    }

    /// Loads `account` `count` times at once, spread over the three services.
    func burst(_ count: Int) async -> [Result<APIResponse<Account>, APIError>] {
        await withTaskGroup(of: Result<APIResponse<Account>, APIError>.self) { group in
            for index in 0..<count {
                let manager = account(Self.services[index % Self.services.count])
                group.addTask {
                    do throws(APIError) {
                        return .success(try await manager.load())
                    } catch {
                        return .failure(error)
                    }
                }
            }
            var results: [Result<APIResponse<Account>, APIError>] = []
            for await result in group { results.append(result) }
            return results
        }
    }

    /// Signs in: the first load refreshes (there is no credential yet); returns its token.
    func signIn() async throws -> String {
        _ = try await account().load()
        return try #require(authenticator.credential?.token)
    }

    func stop() async {
        transport.shutdown()
        await server.stop()
    }
}

@Suite("Authenticator: one refresh for everyone", .timeLimit(.minutes(2)))
struct AuthenticatorTests {
    @Test func theFirstLoadGetsACredentialBeforeItIsSent() async throws {
        let shop = try await TokenShop.make()
        let response = try await shop.account().load()
        #expect(response.attempts == 1)
        #expect(shop.tokens.issued == 1)
        #expect(shop.tokens.refusedRequests == 0)
        #expect(response.requestDescription.contains("Authorization: ***"))
        await shop.stop()
    }

    @Test func oneRefreshServesTwoHundredLoadsAcrossThreeServices() async throws {
        let shop = try await TokenShop.make()
        let old = try await shop.signIn()
        shop.tokens.expireAll()
        // The refresh takes a while. A load sent before it began meets the old token's 401 and
        // is sent again with the new one; a load that starts while it runs waits for it and is
        // sent once, with the new token (which of the two each load is depends on how quickly
        // the first 401s come back: eight connections to the shop carry the 200).
        shop.tokens.delayIssuing(by: .seconds(2))
        let results = await shop.burst(200)
        let responses = results.compactMap { try? $0.get() }
        #expect(responses.count == 200)
        #expect(shop.tokens.refreshAttempts == 2)  // the sign-in's, and one for the burst
        #expect(responses.allSatisfy { $0.attempts <= 2 })
        let metTheRefusal = responses.count { $0.attempts == 2 }
        #expect(metTheRefusal >= 1)
        // Each load that met the refusal sent the old token once; none sent it after.
        #expect(shop.tokens.requests(withExpired: old) == metTheRefusal)
        #expect(shop.authenticator.credential?.token != old)
        await shop.stop()
    }

    @Test func aFailedRefreshFailsEveryWaitingLoadAndClearsTheCredential() async throws {
        let shop = try await TokenShop.make()
        let old = try await shop.signIn()
        shop.tokens.expireAll()
        shop.tokens.failRefreshes(true)
        shop.tokens.delayIssuing(by: .seconds(2))
        let results = await shop.burst(200)
        let errors = results.compactMap { result -> APIError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(errors.count == 200)
        #expect(errors.allSatisfy { $0.kind == .authenticationFailed })
        #expect(errors.first.map { "\($0.underlyingError.map { String(describing: $0) } ?? "")".contains("500") } == true)
        #expect(shop.tokens.refreshAttempts == 2)
        // Loads sent before the refresh began met the old token's refusal; those started during
        // it waited for it and were never sent (how many of each depends on how quickly the first
        // 401s come back). None sent the old token after the refresh.
        #expect((1...200).contains(shop.tokens.requests(withExpired: old)))
        #expect(shop.authenticator.credential == nil)
        await shop.stop()
    }

    /// 200 loads on eight connections; the token expires. From the first refusal on, the loads
    /// still waiting for a connection are held back for the refresh instead of going out with
    /// the refused token, and the refresh request (to the same host) does not wait behind them.
    @Test(arguments: [false, true])
    func aRefusedTokenIsNotSentAgainAndTheRefreshDoesNotWaitInLine(refreshFails: Bool) async throws {
        let shop = try await TokenShop.make()
        let old = try await shop.signIn()
        shop.tokens.expireAll()
        shop.tokens.failRefreshes(refreshFails)
        shop.tokens.delayIssuing(by: .milliseconds(300))
        // Answers take 50 ms, so that the burst fills the queue before the first one comes.
        shop.tokens.delayAnswers(by: .milliseconds(50))
        let started = shop.tokens.arrivals.count
        let results = await shop.burst(200)
        let arrivals = shop.tokens.arrivals.dropFirst(started)
        let firstRefusal = try #require(arrivals.first { $0.kind == .refusalAnswered })
        // The token service is on the same host: its request would queue behind the held back.
        let refresh = try #require(arrivals.first { $0.kind == .refresh })
        let refreshWaited = refresh.at - firstRefusal.at
        // Only the requests on the wire when the first refusal came (one per connection) carried
        // the old token.
        #expect(shop.tokens.requests(withExpired: old) <= 8)
        #expect(arrivals.count { $0.kind == .refused(token: old) } <= 8)
        #expect(refreshWaited < .milliseconds(100), "the refresh reached the server \(refreshWaited) after the first refusal")
        #expect(shop.tokens.refreshAttempts == 2)
        if refreshFails {
            #expect(results.allSatisfy { (try? $0.get()) == nil })
            #expect(results.allSatisfy { if case .failure(let error) = $0 { error.kind == .authenticationFailed } else { false } })
        } else {
            let responses = results.compactMap { try? $0.get() }
            #expect(responses.count == 200)
            // A load held back was sent once, with the new token: one attempt.
            #expect(responses.count { $0.attempts == 2 } == shop.tokens.requests(withExpired: old))
            #expect(responses.allSatisfy { $0.attempts <= 2 })
        }
        await shop.stop()
    }

    @Test func aRefusalAfterTheRefreshIsDeliveredNotRefreshedAgain() async throws {
        let shop = try await TokenShop.make()
        _ = try await shop.signIn()
        shop.tokens.refuseAll(true)
        let error = await #expect(throws: APIError.self) { try await shop.account().load() }
        #expect(error?.kind == .httpStatus)
        #expect(error?.statusCode == 401)
        #expect(error?.attempts == 2)
        #expect(shop.tokens.refreshAttempts == 2)
        await shop.stop()
    }

    @Test func anApplicationCodeCanMeanExpiredToo() async throws {
        let shop = try await TokenShop.make(expiredApplicationCodes: ["4011"])
        _ = try await shop.signIn()
        shop.tokens.expireAll()
        let response = try await shop.account(path: "account-in-body").load()
        #expect(response.attempts == 2)
        #expect(shop.tokens.refreshAttempts == 2)
        await shop.stop()
    }

    @Test func aCredentialNearItsExpiryIsRefreshedAheadOnce() async throws {
        let shop = try await TokenShop.make()
        let old = try await shop.signIn()
        shop.authenticator.setCredential(Authenticator.Credential(token: old, expiresAt: Date().addingTimeInterval(20)))
        let results = await shop.burst(30)
        #expect(results.allSatisfy { (try? $0.get())?.attempts == 1 })
        await shop.authenticator.refreshSettled()
        #expect(shop.authenticator.credential?.token != old)
        // The refresh ahead is over, and no request runs that could start another.
        #expect(!shop.authenticator.isRefreshing)
        #expect(shop.tokens.refreshAttempts == 2)
        await shop.stop()
    }

    @Test func theDelegateFaceWaitsForTheRefreshToo() async throws {
        let shop = try await TokenShop.make()
        _ = try await shop.signIn()
        shop.tokens.expireAll()
        let manager = shop.account()
        let recorder = Recorder()
        manager.delegate = recorder
        manager.callbackExecutor = .immediate
        let ids = (0..<10).map { _ in manager.loadData() }
        await recorder.wait(for: "delegate.", count: 10)
        #expect(recorder.deliveries == 10)
        #expect(ids.allSatisfy { id in recorder.outcome(id).allSatisfy { (try? $0.get()) != nil } })
        #expect(shop.tokens.refreshAttempts == 2)
        await shop.stop()
    }

    @Test func aParameterCredentialIsRedactedWhereRequestsAreShown() throws {
        _ = Authenticator(placement: .parameter("access_token")) { Authenticator.Credential(token: "never") }
        let query = HTTPRequest(url: URL(string: "https://api.example/v1/me?access_token=s3cret&page=2")!)
        #expect(!query.curlCommand().contains("s3cret"))
        #expect(query.curlCommand().contains("access_token=***&page=2"))
        #expect(!APIProxy.loggable(query.url).contains("s3cret"))
        let body = HTTPRequest(method: .post, url: URL(string: "https://api.example/v1/me")!, body: .bytes(Data(#"{"access_token": "s3cret", "n": 1}"#.utf8)))
        #expect(!body.curlCommand().contains("s3cret"))
        #expect(body.curlCommand(revealingSecrets: true).contains("s3cret"))
        let form = HTTPRequest(method: .post, url: URL(string: "https://api.example/v1/me")!, body: .bytes(Data("n=1&access_token=s3cret".utf8)))
        #expect(!form.curlCommand().contains("s3cret"))
    }
}

/// The credential lifecycle as a value: every interleaving without I/O.
@Suite("Authenticator: the credential state machine")
struct CredentialStateTests {
    typealias State = CredentialState<String>
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func isUse(_ action: State.Acquisition, generation expected: Int) -> Bool {
        if case .use(_, let generation) = action { return generation == expected }
        return false
    }

    func isWait(_ action: State.Acquisition) -> Bool {
        if case .wait = action { return true }
        return false
    }

    @Test func noCredentialStartsOneRefreshAndQueuesEveryone() {
        var state = State(credential: nil)
        guard case .waitAndRefresh = state.acquire(now: now, window: 60, waiter: { "a" }) else {
            Issue.record("no refresh")
            return
        }
        let second = state.acquire(now: now, window: 60, waiter: { "b" })
        #expect(isWait(second), "a second refresh")
        let (waiters, generation) = state.refreshed(Authenticator.Credential(token: "t1"), at: now)
        #expect(waiters == ["a", "b"])
        #expect(generation == 1)
        #expect(isUse(state.acquire(now: now, window: 60, waiter: { "c" }), generation: 1))
    }

    @Test func anExpiryReportedTwiceRefreshesOnceAndALateReportUsesTheNewCredential() {
        var state = State(credential: Authenticator.Credential(token: "t1"))
        guard case .waitAndRefresh = state.expired("a", used: 1) else {
            Issue.record("no refresh")
            return
        }
        let secondReport = state.expired("b", used: 1)
        #expect(isWait(secondReport), "a second refresh")
        // New requests wait too: the credential was refused.
        let newLoad = state.acquire(now: now, window: 60, waiter: { "c" })
        #expect(isWait(newLoad), "used a refused credential")
        #expect(state.refreshed(Authenticator.Credential(token: "t2"), at: now).waiters == ["a", "b", "c"])
        #expect(isUse(state.expired("late", used: 1), generation: 2))
    }

    @Test func aRefusalSeenByTheTransportMakesTheGenerationStaleAndStartsOneRefresh() {
        var state = State(credential: Authenticator.Credential(token: "t1"))
        #expect(!state.isStale(1))
        let firstRefusalStartsRefresh = state.refused(1)
        #expect(firstRefusalStartsRefresh)
        #expect(state.isStale(1))
        // Seen again, or reported by the load afterwards: the same refresh.
        let secondRefusalStartsRefresh = state.refused(1)
        #expect(!secondRefusalStartsRefresh)
        let reported = state.expired("a", used: 1)
        #expect(isWait(reported), "a second refresh")
        let newLoad = state.acquire(now: now, window: 60, waiter: { "b" })
        #expect(isWait(newLoad), "a new load used the refused credential")
        #expect(state.refreshed(Authenticator.Credential(token: "t2"), at: now).waiters == ["a", "b"])
        #expect(state.isStale(1))
        #expect(!state.isStale(2))
        // A late refusal of the old generation changes nothing.
        let lateRefusalStartsRefresh = state.refused(1)
        #expect(!lateRefusalStartsRefresh)
        #expect(!state.isStale(2))
    }

    @Test func aCredentialRefreshedAheadIsNotStaleUntilItIsRefused() {
        var state = State(credential: Authenticator.Credential(token: "t1", expiresAt: now.addingTimeInterval(30)))
        guard case .useAndRefresh(_, 1) = state.acquire(now: now, window: 60, waiter: { "a" }) else {
            Issue.record("no refresh ahead")
            return
        }
        #expect(!state.isStale(1))
        // A refresh runs already: a refusal makes the generation stale without a second one.
        let refusalStartsRefresh = state.refused(1)
        #expect(!refusalStartsRefresh)
        #expect(state.isStale(1))
    }

    @Test func aFailedRefreshLeavesTheOldGenerationStale() {
        var state = State(credential: Authenticator.Credential(token: "t1"))
        let refusalStartsRefresh = state.refused(1)
        #expect(refusalStartsRefresh)
        _ = state.refreshFailed(AuthenticationFailure(underlying: TestFailure("down")))
        #expect(state.isStale(1))
        guard case .fail = state.expired("held back", used: 1) else {
            Issue.record("a held-back load did not fail with the refresh")
            return
        }
    }

    @Test func aFailedRefreshFailsLateReportsInsteadOfRefreshingAgain() {
        var state = State(credential: Authenticator.Credential(token: "t1"))
        _ = state.expired("a", used: 1)
        #expect(state.refreshFailed(AuthenticationFailure(underlying: TestFailure("down"))) == ["a"])
        #expect(state.credential == nil)
        guard case .fail = state.expired("late", used: 1) else {
            Issue.record("refreshed again for a late report")
            return
        }
        // A new request (no credential) may try again.
        guard case .waitAndRefresh = state.acquire(now: now, window: 60, waiter: { "new" }) else {
            Issue.record("no new refresh")
            return
        }
    }

    @Test func aCredentialNearItsExpiryIsUsedWhileOneRefreshRunsAhead() {
        var state = State(credential: Authenticator.Credential(token: "t1", expiresAt: now.addingTimeInterval(30)))
        guard case .useAndRefresh(_, 1) = state.acquire(now: now, window: 60, waiter: { "a" }) else {
            Issue.record("no refresh ahead")
            return
        }
        #expect(isUse(state.acquire(now: now, window: 60, waiter: { "b" }), generation: 1))
        // Expired meanwhile: requests wait for the refresh already running.
        let later = state.acquire(now: now.addingTimeInterval(31), window: 60, waiter: { "c" })
        #expect(isWait(later), "used an expired credential")
        #expect(state.refreshed(Authenticator.Credential(token: "t2"), at: now).waiters == ["c"])
    }

    /// Each credential is refreshed ahead once, three quarters into its life at the earliest,
    /// whatever its lifetime against the 60-second window: a request every 300 ms for three
    /// lifetimes, each refresh answering at once with a credential that lives as long.
    @Test(arguments: [10.0, 60.0, 3_600.0])
    func eachCredentialIsRefreshedAheadOnceLateInItsLife(lifetime: TimeInterval) {
        var state = State(credential: Authenticator.Credential(token: "t0", expiresAt: now.addingTimeInterval(lifetime), issuedAt: now))
        var refreshedAt: [TimeInterval] = []
        var elapsed: TimeInterval = 0
        for step in 0..<Int(3 * lifetime / 0.3) {
            elapsed = Double(step) * 0.3
            let at = now.addingTimeInterval(elapsed)
            switch state.acquire(now: at, window: 60, waiter: { "w" }) {
            case .use:
                continue
            case .useAndRefresh:
                refreshedAt.append(elapsed)
                // A refresh that returns a credential with an expiry alone: issued when it returned.
                _ = state.refreshed(Authenticator.Credential(token: "t\(refreshedAt.count)", expiresAt: at.addingTimeInterval(lifetime)), at: at)
            default:
                Issue.record("at \(elapsed) s the request did not go on with the credential")
                return
            }
        }
        let earliest = lifetime - min(60, lifetime / 4)
        let gaps = zip([0] + refreshedAt, refreshedAt).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 >= earliest - 1e-9 }, "refreshed at \(refreshedAt) s")
        #expect(refreshedAt.count >= 2 && refreshedAt.count <= 4, "refreshed at \(refreshedAt) s")
    }

    /// A credential whose issue is unknown (the app set it with an expiry alone) is refreshed a
    /// whole window ahead; one made `validFor` a lifetime knows its issue.
    @Test func aCredentialWithoutAnIssueTimeIsRefreshedAWholeWindowAhead() {
        var unknown = State(credential: Authenticator.Credential(token: "t", expiresAt: now.addingTimeInterval(50)))
        guard case .useAndRefresh = unknown.acquire(now: now, window: 60, waiter: { "a" }) else {
            Issue.record("no refresh ahead of an expiry within the window")
            return
        }
        var known = State(credential: Authenticator.Credential(token: "t", validFor: .seconds(50)))
        #expect(isUse(known.acquire(now: Date(), window: 60, waiter: { "a" }), generation: 1))
    }

    /// A credential with a lifetime is dated when the authenticator stores it — a refresh's as
    /// it returns, the app's as a request first uses it — on the time it is given, not the
    /// system's as it was made.
    @Test func aCredentialWithALifetimeIsDatedWhereItIsStoredOrFirstUsed() {
        var state = State(credential: Authenticator.Credential(token: "t", validFor: .seconds(100)))
        #expect(state.credential?.expiresAt == nil)
        let later = now.addingTimeInterval(1_000)
        #expect(isUse(state.acquire(now: later, window: 60, waiter: { "a" }), generation: 1))
        #expect(state.credential?.issuedAt == later)
        #expect(state.credential?.expiresAt == later.addingTimeInterval(100))
        // 20 s left: within the last quarter of its life, it is refreshed ahead.
        guard case .useAndRefresh = state.acquire(now: later.addingTimeInterval(80), window: 60, waiter: { "a" }) else {
            Issue.record("the dated credential was not refreshed ahead in its last quarter")
            return
        }
        let refreshedAt = later.addingTimeInterval(85)
        _ = state.refreshed(Authenticator.Credential(token: "t2", validFor: .seconds(100)), at: refreshedAt)
        #expect(state.credential?.expiresAt == refreshedAt.addingTimeInterval(100))
        #expect(state.credential?.issuedAt == refreshedAt)
    }

    @Test func aCredentialSetByTheAppReplacesTheOld() {
        var state = State(credential: Authenticator.Credential(token: "t1"))
        state.set(Authenticator.Credential(token: "signed-in"))
        #expect(state.generation == 2)
        #expect(isUse(state.expired("a", used: 1), generation: 2))
    }
}
