import Foundation
@_spi(CrossModule) import AIFTransport

/// Supplies the credential of one or more services' requests and refreshes it — at most one
/// refresh at a time, however many requests fail or wait.
///
/// ```swift
/// let session = Authenticator { try await TokenManager().load().content.credential }
/// ServiceRegistry.shared.setAuthenticator(session, for: ["shop", "orders"])
/// ```
///
/// - A request gets the current credential as its ``Placement`` says (an `Authorization:
///   Bearer …` header by default) before it is signed.
/// - A response recognised as "credential expired" (``expiredStatusCodes``, 401 by default, or
///   a service veto whose code is in ``expiredApplicationCodes``) starts a refresh; requests
///   that fail meanwhile, and new ones, wait for it — and so do requests made with the refused
///   credential that are still waiting for a connection: ``/AIFTransport/CurlTransport`` holds them back
///   from the moment the first refusal arrives, so only those already on the wire carry the
///   old credential (at most one per connection), and the refresh request does not queue
///   behind them. When the refresh succeeds, each is sent again **once**, with the new
///   credential, signed afresh; a request that fails again is not refreshed a second time.
///   When it fails (or takes longer than ``refreshTimeout``), every waiting request fails with
///   `APIError.Kind.authenticationFailed` carrying the refresh's error, the
///   credential is cleared, and no request is sent with the old one.
/// - A credential that says when it expires is refreshed ahead, within ``refreshWindow`` of
///   its expiry (or in the last quarter of its lifetime, when that is shorter: a token that
///   lives a minute is refreshed after 45 seconds, not by every request), by the first request
///   that sees it there — one refresh, not one per request — while requests go on using it.
///
/// The refresh is any `async` function; often an ordinary manager load, on the same service
/// or another. Its manager must not use this authenticator itself (override
/// `APIManager.usesAuthenticator` to return `false`), or the refresh would wait for itself.
public final class Authenticator: Sendable {
    /// Where a request carries the credential.
    public enum Placement: Sendable, Hashable {
        /// `Authorization: <scheme> <token>` (`Bearer` by default).
        case authorization(scheme: String)
        /// A request parameter of this name, sent and signed with the others (in the query of
        /// a GET, in the body of a POST); shown as `***` in logs and curl renderings.
        case parameter(String)

        /// `Authorization: Bearer <token>`.
        public static let bearer = Placement.authorization(scheme: "Bearer")
    }

    /// A credential and where a request carries it: what
    /// ``ServiceRegistry/ResolvedService/makeRequest(path:method:parameters:headers:bodyEncoding:arrays:query:rawBody:rawBodyContentType:placements:credential:signingContext:)``
    /// puts in the request it makes.
    public struct PlacedCredential: Sendable, Hashable {
        /// The credential.
        public var credential: Credential
        /// Where it goes.
        public var placement: Placement

        /// A credential placed as `placement` says.
        ///
        /// - Parameters:
        ///   - credential: The credential.
        ///   - placement: Where it goes; `Authorization: Bearer` by default.
        public init(_ credential: Credential, as placement: Placement = .bearer) {
            self.credential = credential
            self.placement = placement
        }
    }

    /// Where requests carry the credential.
    public let placement: Placement
    /// Response statuses meaning the credential expired; `[401]` by default.
    public let expiredStatusCodes: Set<Int>
    /// Application error codes (a service veto's ``ServiceVeto/code``) meaning the credential
    /// expired, for backends that report it in a 200 body; none by default.
    public let expiredApplicationCodes: Set<String>
    /// How long a refresh may take before it counts as failed.
    public let refreshTimeout: Duration
    /// How long before its expiry a credential is refreshed ahead — at most: never more than a
    /// quarter of its lifetime, when its issue is known (``Authenticator/Credential/issuedAt``, or when the
    /// refresh that produced it returned).
    public let refreshWindow: Duration

    private typealias Waiter = @Sendable (Result<(Credential, Int), AuthenticationFailure>) -> Void
    private let state: Locked<CredentialState<Waiter>>
    /// Who waits for the refresh under way to settle (``refreshSettled()``).
    private let settleWatchers = Locked<[CheckedContinuation<Void, Never>]>([])
    private let refresh: @Sendable () async throws -> Credential

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - placement: Where requests carry the credential; `Authorization: Bearer` by default.
    ///   - credential: The credential to start with (after a sign-in), or `nil` to refresh
    ///     before the first request.
    ///   - expiredStatusCodes: Statuses meaning "expired"; 401 by default.
    ///   - expiredApplicationCodes: Application codes meaning "expired"; none by default.
    ///   - refreshTimeout: 30 seconds by default.
    ///   - refreshWindow: 60 seconds by default.
    ///   - refresh: Gets a new credential; throws when it cannot.
    public init(
        placement: Placement = .bearer, credential: Credential? = nil, expiredStatusCodes: Set<Int> = [401],
        expiredApplicationCodes: Set<String> = [], refreshTimeout: Duration = .seconds(30), refreshWindow: Duration = .seconds(60),
        refresh: @escaping @Sendable () async throws -> Credential
    ) {
        self.placement = placement
        self.expiredStatusCodes = expiredStatusCodes
        self.expiredApplicationCodes = expiredApplicationCodes
        self.refreshTimeout = refreshTimeout
        self.refreshWindow = refreshWindow
        self.refresh = refresh
        state = Locked(CredentialState(credential: credential))
        if case .parameter(let name) = placement { HTTPRequest.registerSecretParameter(name) }
    }

    /// An authenticator that holds a token and cannot refresh it — a personal access token, an
    /// API key: every request carries it as `Authorization: Bearer <token>`. A refusal (401) fails
    /// the load with the server's answer, as it would without an authenticator. When the token
    /// changes (a sign-in, a sign-out), ``setCredential(_:)`` replaces or removes it for the
    /// requests made from then on; a load made while none is set fails, saying so.
    ///
    /// ```swift
    /// let github = Authenticator.bearer(token)
    /// ServiceRegistry.shared.setAuthenticator(github, for: ["github"])
    /// // After the user signs in again:
    /// github.setCredential(Authenticator.Credential(token: newToken))
    /// ```
    ///
    /// - Parameter token: The token.
    /// - Returns: The authenticator.
    public static func bearer(_ token: String) -> Authenticator {
        fixed(token, placement: .bearer)
    }

    /// An authenticator for HTTP Basic authentication (RFC 7617): every request carries
    /// `Authorization: Basic <base64(user:password)>`; it cannot refresh, as ``bearer(_:)``.
    /// A user name with a colon, which the scheme cannot carry, fails each load saying so.
    ///
    /// - Parameters:
    ///   - user: The user name.
    ///   - password: The password.
    /// - Returns: The authenticator.
    public static func basic(user: String, password: String) -> Authenticator {
        guard !user.contains(":") else {
            return Authenticator(placement: .authorization(scheme: "Basic"), expiredStatusCodes: []) {
                throw FixedCredentialMissing(reason: "the Basic authenticator's user name \(user.debugDescription) contains a colon, which the scheme cannot carry (RFC 7617)")
            }
        }
        return fixed(Data("\(user):\(password)".utf8).base64EncodedString(), placement: .authorization(scheme: "Basic"))
    }

    /// An authenticator that holds `token` where `placement` says and cannot refresh it (see
    /// ``bearer(_:)``).
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - placement: Where requests carry it.
    /// - Returns: The authenticator.
    public static func fixed(_ token: String, placement: Placement) -> Authenticator {
        Authenticator(placement: placement, credential: Credential(token: token), expiredStatusCodes: []) {
            throw FixedCredentialMissing(reason: "the authenticator holds a fixed token and none is set: give it one with setCredential(_:)")
        }
    }

    /// The current credential, if there is one.
    public var credential: Credential? { state.withLock { $0.credential } }

    /// Whether a refresh is running: none starts again unless a request asks for the credential.
    package var isRefreshing: Bool { state.withLock { $0.isRefreshing } }

    /// Returns once no refresh runs: at once, or when the one under way has settled — its
    /// credential stored, or its failure handed on. For a refresh ahead, which no load waits for.
    package func refreshSettled() async {
        await withCheckedContinuation { continuation in
            // Under the watchers' lock, which `settle` takes after the state has changed: a
            // refresh seen running is one whose settling will resume this.
            let settled = settleWatchers.withLock { watchers in
                guard isRefreshing else { return true }
                watchers.append(continuation)
                return false
            }
            if settled { continuation.resume() }
        }
    }

    /// Replaces the credential (after a sign-in), or removes it (`nil`, after a sign-out):
    /// requests that used the old one and are told it expired then use this one.
    public func setCredential(_ credential: Credential?) {
        state.withLock { $0.set(credential) }
    }

    /// Whether `response` (and the service's veto of it, if any) says the credential expired.
    package func isExpiry(_ response: HTTPResponse, veto: ServiceVeto?) -> Bool {
        if expiredStatusCodes.contains(response.statusCode) { return true }
        guard let veto, !expiredApplicationCodes.isEmpty else { return false }
        return expiredApplicationCodes.contains(veto.code)
    }

    /// Gets the credential for a request: at once, on this thread, when there is a valid one;
    /// else, on `executor`, when the refresh running (or started now) ends — or when
    /// `cancellation` is cancelled first.
    ///
    /// - Parameters:
    ///   - executor: Where `completion` runs when the request had to wait.
    ///   - cancellation: The load's; cancelling it ends the wait.
    ///   - clock: What expiry and the refresh window are measured on, and the refresh's
    ///     timeout waited on: the load's.
    ///   - completion: Gets the credential and its generation (to pass back to
    ///     ``renew(after:on:cancellation:clock:completion:)``), the refresh's failure, or the
    ///     cancellation. Called once.
    package func acquire(
        on executor: any StepExecutor, cancellation: AsyncCancellation, clock: any LoadClock = SystemLoadClock(),
        completion: @escaping @Sendable (CredentialOutcome) -> Void
    ) {
        let window = refreshWindow.timeInterval
        let now = clock.date
        let action = state.withLock { state in
            state.acquire(now: now, window: window) { Self.waiter(on: executor, cancellation: cancellation, completion) }
        }
        perform(action, clock: clock, completion)
    }

    /// A request that carried the credential of `generation` was told it expired: gets the
    /// next one — the one already refreshed, or the outcome of the refresh this starts or
    /// joins — as ``acquire(on:cancellation:clock:completion:)`` does.
    package func renew(
        after generation: Int, on executor: any StepExecutor, cancellation: AsyncCancellation, clock: any LoadClock = SystemLoadClock(),
        completion: @escaping @Sendable (CredentialOutcome) -> Void
    ) {
        let action = state.withLock { $0.expired(Self.waiter(on: executor, cancellation: cancellation, completion), used: generation) }
        perform(action, clock: clock, completion)
    }

    /// The condition a request that carries the credential of `generation` is sent under
    /// (see ``SendingCondition``): withdrawn when the credential went stale while it waited
    /// for a connection; and, when `reportsRefusal` (it is not already the one retry after a
    /// refusal), a status in ``expiredStatusCodes`` marks the credential refused as the
    /// answer arrives — and starts the refresh, on `clock` — so that the requests queued
    /// behind it are held back at once, not sent with the refused credential.
    package func sendingCondition(generation: Int, reportsRefusal: Bool, clock: any LoadClock = SystemLoadClock()) -> any SendingCondition {
        CredentialInUse(authenticator: self, generation: generation, reportsRefusal: reportsRefusal, clock: clock)
    }

    /// Whether requests carrying the credential of `generation` should not go out now.
    fileprivate func isStale(_ generation: Int) -> Bool {
        state.withLock { $0.isStale(generation) }
    }

    /// A request carrying the credential of `generation` was answered with a refusal.
    fileprivate func noteRefusal(of generation: Int, clock: any LoadClock) {
        if state.withLock({ $0.refused(generation) }) { startRefresh(clock: clock) }
    }

    /// A waiter that hands the refresh's outcome to `completion` on `executor`, unless the
    /// load is cancelled first.
    private static func waiter(on executor: any StepExecutor, cancellation: AsyncCancellation, _ completion: @escaping @Sendable (CredentialOutcome) -> Void) -> Waiter {
        let step = PendingStep<CredentialOutcome>(on: executor) { outcome in completion(outcome ?? .cancelled) }
        cancellation.attach(step)
        return { result in
            switch result {
            case .success(let (credential, generation)): step.resume(with: .credential(credential, generation: generation))
            case .failure(let failure): step.resume(with: .failed(failure))
            }
        }
    }

    private func perform(_ action: CredentialState<Waiter>.Acquisition, clock: any LoadClock, _ completion: @Sendable (CredentialOutcome) -> Void) {
        switch action {
        case .use(let credential, let generation):
            completion(.credential(credential, generation: generation))
        case .useAndRefresh(let credential, let generation):
            startRefresh(clock: clock)
            completion(.credential(credential, generation: generation))
        case .wait:
            break
        case .waitAndRefresh:
            startRefresh(clock: clock)
        case .fail(let failure):
            completion(.failed(failure))
        }
    }

    /// Runs the refresh, bounded by ``refreshTimeout`` on `clock`, and hands its outcome to the
    /// waiters: the refresh's, or — when the timeout comes first — its failure, the refresh
    /// then cancelled. A credential that comes counts as issued at `clock`'s time.
    ///
    /// At high priority: every load of the service waits for it. (In a test process whose
    /// cooperative threads were busy with other tests, the token request reached the server
    /// 22–29 ms after the first 401 so, 43–87 ms at the default priority.)
    private func startRefresh(clock: any LoadClock) {
        let settled = Locked(false)
        let refreshing = Task(priority: .high) { [self] in
            let outcome: Result<Credential, any Error>
            do {
                outcome = .success(try await refresh())
            } catch {
                outcome = .failure(error)
            }
            settle(outcome, once: settled, clock: clock)
        }
        let timeout = refreshTimeout
        clock.schedule(after: timeout) { [weak self] in
            if self?.settle(.failure(RefreshTimedOut(timeout: timeout)), once: settled, clock: clock) == true { refreshing.cancel() }
        }
    }

    /// Hands the refresh's outcome to the waiters, unless it was handed already (the refresh
    /// and its timeout race); whether it was this one.
    @discardableResult
    private func settle(_ outcome: Result<Credential, any Error>, once settled: Locked<Bool>, clock: any LoadClock) -> Bool {
        let first = settled.withLock { settled in
            defer { settled = true }
            return !settled
        }
        guard first else { return false }
        switch outcome {
        case .success(let credential):
            let (waiters, generation) = state.withLock { $0.refreshed(credential, at: clock.date) }
            for waiter in waiters { waiter(.success((credential, generation))) }
        case .failure(let error):
            let failure = AuthenticationFailure(underlying: error)
            let waiters = state.withLock { $0.refreshFailed(failure) }
            for waiter in waiters { waiter(.failure(failure)) }
        }
        for watcher in settleWatchers.withLock({ watchers in defer { watchers = [] }; return watchers }) { watcher.resume() }
        return true
    }
}

/// The condition of a request that carries an authenticator's credential.
private final class CredentialInUse: SendingCondition {
    let authenticator: Authenticator
    let generation: Int
    let reportsRefusal: Bool
    let clock: any LoadClock

    init(authenticator: Authenticator, generation: Int, reportsRefusal: Bool, clock: any LoadClock) {
        self.authenticator = authenticator
        self.generation = generation
        self.reportsRefusal = reportsRefusal
        self.clock = clock
    }

    func allowsSending() -> Bool {
        !authenticator.isStale(generation)
    }

    func responseArrived(statusCode: Int) {
        guard reportsRefusal, authenticator.expiredStatusCodes.contains(statusCode) else { return }
        authenticator.noteRefusal(of: generation, clock: clock)
    }
}

/// What a request waiting for a credential gets.
package enum CredentialOutcome: Sendable {
    /// The credential to send, and its generation.
    case credential(Authenticator.Credential, generation: Int)
    /// The refresh failed.
    case failed(AuthenticationFailure)
    /// The load was cancelled while it waited.
    case cancelled
}

/// Why an authenticator with a fixed token (``Authenticator/bearer(_:)``) has no credential to give.
struct FixedCredentialMissing: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Two authenticators are equal when they are the same one: each holds a credential and its
/// refresh of its own.
extension Authenticator: Hashable {
    /// Whether the two are the same authenticator.
    public static func == (one: Authenticator, other: Authenticator) -> Bool { one === other }

    /// Hashes the authenticator's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}

/// Why an ``Authenticator`` could not supply a credential: its refresh failed.
package struct AuthenticationFailure: Error, Sendable, CustomStringConvertible {
    /// The refresh's error.
    package let underlying: any Error

    package var description: String { "the credential could not be refreshed: \(underlying)" }
}

/// A refresh that took longer than ``Authenticator/refreshTimeout``.
struct RefreshTimedOut: Error, CustomStringConvertible {
    let timeout: Duration
    var description: String { "the refresh took longer than its timeout (\(timeout))" }
}
