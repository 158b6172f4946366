import AIFNetworking
import AIFNetworkingTesting
import Foundation
import Logging
import Synchronization
import Testing

/// A user's tests drive loads on a clock of their own, through the public API alone (no
/// `@testable` import): a retry's wait and a load's total timeout pass when the test moves the
/// clock, with no real time spent.
@Suite("A proxy on the user's own clock")
struct PublicClockTests {
    /// A clock moved by hand, as a user would write one: its waits run when the test advances
    /// past their end; `waiting(_:)` returns once that many are pending.
    final class HandClock: APIProxy.Clock {
        private struct State {
            var now = Duration.seconds(100)
            var waits: [(end: Duration, work: @Sendable () -> Void)] = []
            var watcher: (count: Int, continuation: CheckedContinuation<Void, Never>)?
        }
        private let state = Mutex(State())

        var now: Duration { state.withLock { $0.now } }
        var date: Date { Date(timeIntervalSince1970: 1_700_000_000) + state.withLock { $0.now.timeInterval } }

        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
            let ready = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.waits.append((state.now + delay, work))
                guard let watcher = state.watcher, state.waits.count >= watcher.count else { return nil }
                state.watcher = nil
                return watcher.continuation
            }
            ready?.resume()
        }

        /// Returns once `count` waits are pending (a load's deadline is one of them).
        func waiting(_ count: Int) async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.waits.count >= count { return true }
                    state.watcher = (count, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        func advance(by step: Duration) {
            let due = state.withLock { state -> [@Sendable () -> Void] in
                state.now += step
                let now = state.now
                defer { state.waits.removeAll { $0.end <= now } }
                return state.waits.filter { $0.end <= now }.map(\.work)
            }
            for work in due { work() }
        }
    }

    struct Flaky: Service {
        var name: ServiceName = "flaky"
        var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
            [.online: ServiceEnvironment(baseURL: URL(string: "https://api.flaky.test")!, apiVersion: "v1")]
        }
        var retryPolicy: RetryPolicy { RetryPolicy(baseDelay: .milliseconds(20), maxDelay: .seconds(30)) }
    }

    static func manager(_ stub: StubTransport, clock: HandClock, timeouts: HTTPRequest.Timeouts? = nil) -> APIManager<NoContent> {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(Flaky())
        let proxy = APIProxy(transport: stub, clock: clock)
        return APIManager(Endpoint<NoContent>(service: "flaky", path: "report", timeouts: timeouts), proxy: proxy, registry: registry)
    }

    @Test func aRetrysWaitPassesWhenTheClockDoes() async throws {
        let clock = HandClock()
        let stub = StubTransport()
        stub.stub(.get, "report", with: .status(503, headers: ["Retry-After": "2"]), times: 1)
        stub.stub(.get, "report", with: .status(204))
        let load = Task { try await Self.manager(stub, clock: clock).load() }
        await clock.waiting(1)
        #expect(stub.requests.count == 1)
        clock.advance(by: .seconds(2))
        let response = try await load.value
        #expect(response.attempts == 2)
        #expect(stub.requests.count == 2)
    }

    @Test func theTotalTimeoutEndsAWaitForACredentialWhenTheClockPassesIt() async throws {
        let clock = HandClock()
        let stub = StubTransport()
        stub.stub(.get, "report", with: .status(204))
        // A refresh that never ends (its own timeout is ten minutes): only the load's total
        // timeout, counted from its start on the clock, ends the load.
        let authenticator = Authenticator(refreshTimeout: .seconds(600)) { () async throws -> Authenticator.Credential in
            // Until cancelled, spending no time: the refresh's own timeout, on the clock, cancels it.
            let (never, continuation) = AsyncStream<Never>.makeStream()
            for await _ in never {}
            withExtendedLifetime(continuation) {}
            throw CancellationError()
        }
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(Flaky())
        registry.setAuthenticator(authenticator, for: ["flaky"])
        let manager = APIManager(
            Endpoint<NoContent>(service: "flaky", path: "report", timeouts: HTTPRequest.Timeouts(total: .seconds(5))),
            proxy: APIProxy(transport: stub, clock: clock), registry: registry)
        let load = Task { try await manager.load() }
        await clock.waiting(2)   // the refresh's timeout and the load's deadline
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: APIError.self) { try await load.value }
        #expect(error?.kind == .timeout)
        #expect(error?.message.contains("the load's total timeout of 5.0 seconds ran out while it waited for its credential") == true, "\(error?.message ?? "")")
        #expect(error?.attempts == 0)
        #expect(stub.requests.isEmpty)
        clock.advance(by: .seconds(600))   // the refresh's timeout ends it
    }

    /// A credential a refresh returns with a lifetime (an OAuth `expires_in`) is dated on the
    /// proxy's clock: moved by hand three quarters into its life, the next load refreshes it
    /// ahead — with the system's date, it would expire years after the hand clock's time.
    @Test func aCredentialsLifetimeRunsOnTheProxysClock() async throws {
        let clock = HandClock()
        let stub = StubTransport()
        stub.stub(.get, "report", with: .status(204))
        let refreshes = Mutex(0)
        let authenticator = Authenticator { () async throws -> Authenticator.Credential in
            let number = refreshes.withLock { count in
                count += 1
                return count
            }
            return Authenticator.Credential(token: "token-\(number)", validFor: .seconds(120))
        }
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(Flaky())
        registry.setAuthenticator(authenticator, for: ["flaky"])
        let manager = APIManager(Endpoint<NoContent>(service: "flaky", path: "report"), proxy: APIProxy(transport: stub, clock: clock), registry: registry)

        _ = try await manager.load()
        #expect(authenticator.credential?.expiresAt == clock.date.addingTimeInterval(120))
        clock.advance(by: .seconds(80))   // 40 s left: more than a quarter of its life
        _ = try await manager.load()
        #expect(refreshes.withLock { $0 } == 1)
        clock.advance(by: .seconds(15))   // 25 s left: within the last quarter
        _ = try await manager.load()
        await authenticator.refreshSettled()
        #expect(refreshes.withLock { $0 } == 2)
        #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer token-1", "Bearer token-1", "Bearer token-1"])
        #expect(authenticator.credential?.token == "token-2")
    }
}

/// The same clock runs a stub transport's delays: its `schedule(after:_:)` is the one both ask for.
extension PublicClockTests.HandClock: StubTransport.Clock {}
