public import Foundation

extension Authenticator {
    /// A credential an ``Authenticator`` hands to requests: a token, and when it expires if the
    /// server said.
    public struct Credential: Sendable, Hashable, CustomStringConvertible {
        /// The token itself (sent as the authenticator's ``Authenticator/Placement`` says).
        public var token: String
        /// When it stops being valid, if known: the authenticator refreshes it shortly before.
        public var expiresAt: Date?
        /// When it was issued, if known: with ``expiresAt``, its lifetime, which bounds how early
        /// the authenticator refreshes it (see ``Authenticator/refreshWindow``). A credential a
        /// refresh returns without one counts as issued when the refresh returned.
        public var issuedAt: Date?
        /// How long it is valid from its issue, when it was given a lifetime rather than an
        /// expiry (``init(token:validFor:)``): the authenticator dates it — ``issuedAt`` and
        /// ``expiresAt`` — on the clock its loads run on (the proxy's, a test's hand-moved one
        /// included): a refresh's credential as the refresh returns, one set with
        /// ``Authenticator/setCredential(_:)`` or given to `init` as a request first uses it.
        public var lifetime: Duration?

        /// Creates a credential.
        ///
        /// - Parameters:
        ///   - token: The token.
        ///   - expiresAt: When it expires; unknown by default.
        ///   - issuedAt: When it was issued; unknown by default.
        public init(token: String, expiresAt: Date? = nil, issuedAt: Date? = nil) {
            self.token = token
            self.expiresAt = expiresAt
            self.issuedAt = issuedAt
        }

        /// Creates a credential valid for `lifetime` from its issue (an OAuth `expires_in`),
        /// dated by the authenticator that stores it (see ``lifetime``).
        public init(token: String, validFor lifetime: Duration) {
            self.init(token: token)
            self.lifetime = lifetime
        }

        /// The credential dated `now`, if it has a lifetime and no expiry yet: issued then (unless
        /// it says when), expiring its lifetime later.
        func dated(_ now: Date) -> Credential {
            guard expiresAt == nil, let lifetime else { return self }
            var dated = self
            let issued = issuedAt ?? now
            dated.issuedAt = issued
            dated.expiresAt = issued.addingTimeInterval(lifetime.timeInterval)
            return dated
        }

        /// Never the token: `Credential(expires …)`.
        public var description: String {
            let validity = expiresAt.map { "expires \($0)" } ?? lifetime.map { "valid for \($0) from its issue" } ?? "no known expiry"
            return "Credential(\(validity))"
        }
    }
}

/// The lifecycle of an authenticator's credential, as a value: who may use which credential,
/// when a refresh starts, who waits for it. It performs nothing (the ``Authenticator`` runs the
/// refresh and calls the waiters), so every interleaving can be tested without I/O.
///
/// ```
///  no credential / expired ──acquire──▶ refreshing ◀──expired(current generation)── valid
///        ▲                                │    │                                     │
///        └──── refresh failed: waiters ◀──┘    └── refresh succeeded: waiters get ──▶┘
///              fail, credential cleared            the new one, generation + 1
/// ```
///
/// At most one refresh runs at a time, whatever the number of requests that need one: a
/// request that needs the credential while a refresh runs waits for its outcome. A request
/// that failed with an older generation than the current one uses the current one at once.
/// From the first refusal of a generation on, that generation is stale (``isStale(_:)``):
/// requests made with it that have not gone out yet are held back for the refresh.
struct CredentialState<Waiter> {
    /// The credential, or `nil` before the first one and after a failed refresh.
    private(set) var credential: Authenticator.Credential?
    /// Counts the credentials handed out: a request remembers the generation it used.
    private(set) var generation = 0
    /// Whether a refresh is running.
    var isRefreshing: Bool { refresh != nil }
    /// Why the running refresh runs: ahead of the expiry (requests go on with the current
    /// credential meanwhile), or because the credential is missing, expired or was refused
    /// (requests wait for the new one).
    private var refresh: Refresh?
    private var waiters: [Waiter] = []
    /// Why the last refresh failed, while no credential has replaced the one it was for.
    private var lastFailure: AuthenticationFailure?
    /// When the current credential was issued, if known: its own ``Authenticator/Credential/issuedAt``, or
    /// the moment the refresh that produced it returned.
    private var issuedAt: Date?

    private enum Refresh {
        case ahead
        case needed
    }

    init(credential: Authenticator.Credential?) {
        self.credential = credential
        issuedAt = credential?.issuedAt
        if credential != nil { generation = 1 }
    }

    /// What a request should do to get its credential.
    enum Acquisition {
        /// Use this credential (of this generation) now.
        case use(Authenticator.Credential, generation: Int)
        /// Use it now, and start a refresh in the background: it expires soon.
        case useAndRefresh(Authenticator.Credential, generation: Int)
        /// Wait for the refresh that is running; the waiter was queued.
        case wait
        /// Wait, and start the refresh: the waiter was queued.
        case waitAndRefresh
        /// Fail: the request used a credential whose refresh failed since.
        case fail(AuthenticationFailure)
    }

    /// A request needs the credential at `now`; within `window` of its expiry — or within the
    /// last quarter of its lifetime, when that is shorter (``refreshAheadWindow(_:for:)``) — it
    /// is refreshed ahead of time. `waiter` is called (to make the waiter) only when the request
    /// must wait.
    mutating func acquire(now: Date, window: TimeInterval, waiter: () -> Waiter) -> Acquisition {
        // A credential the app gave with a lifetime is dated as a request first uses it.
        if let undated = credential, undated.expiresAt == nil, undated.lifetime != nil {
            credential = undated.dated(now)
            issuedAt = credential?.issuedAt
        }
        let valid = credential.flatMap { credential in credential.expiresAt.map { $0 > now } ?? true ? credential : nil }
        switch (refresh, valid) {
        case (.ahead?, let credential?):
            // Refreshed ahead of its expiry: still good meanwhile.
            return .use(credential, generation: generation)
        case (.some, _):
            refresh = .needed
            waiters.append(waiter())
            return .wait
        case (nil, nil):
            waiters.append(waiter())
            refresh = .needed
            return .waitAndRefresh
        case (nil, let credential?):
            if let expiresAt = credential.expiresAt, expiresAt.timeIntervalSince(now) <= refreshAheadWindow(window, for: credential) {
                refresh = .ahead
                return .useAndRefresh(credential, generation: generation)
            }
            return .use(credential, generation: generation)
        }
    }

    /// How long before its expiry `credential` (the current one) is refreshed ahead: `window`,
    /// but at most a quarter of its lifetime, when its issue is known. A credential that lives
    /// no longer than the window (a 60-second token against the default 60-second window)
    /// would otherwise be inside it from the moment it was issued, and every request would
    /// refresh it; this way each one is refreshed ahead once, three quarters into its life at
    /// the earliest. (Of a credential whose issue is unknown — one the app set with an expiry
    /// alone — only the window is known.)
    private func refreshAheadWindow(_ window: TimeInterval, for credential: Authenticator.Credential) -> TimeInterval {
        guard let expiresAt = credential.expiresAt, let issuedAt else { return window }
        return min(window, max(0, expiresAt.timeIntervalSince(issuedAt)) / 4)
    }

    /// Whether a request that carries the credential of `used` should not be sent: a newer one
    /// exists (or the refresh after it failed), or this one was refused and a refresh is due.
    func isStale(_ used: Int) -> Bool {
        used < generation || used == generation && refresh == .needed
    }

    /// The server refused a request that carried the credential of `used` — seen by the
    /// transport as the answer arrived, before the request's connection goes to the next
    /// one. From now on requests of this generation that have not gone out wait for the
    /// refresh. Returns whether to start it (none runs yet).
    mutating func refused(_ used: Int) -> Bool {
        guard used == generation, credential != nil else { return false }
        defer { refresh = .needed }
        return refresh == nil
    }

    /// A request that used generation `used` was told its credential expired.
    mutating func expired(_ waiter: Waiter, used: Int) -> Acquisition {
        if used < generation, let credential {
            return .use(credential, generation: generation)
        }
        if used < generation, credential == nil, let failure = lastFailure {
            // Its credential's refresh failed: it fails like the requests that waited for it,
            // rather than start another refresh.
            return .fail(failure)
        }
        waiters.append(waiter)
        if refresh != nil {
            // Requests that start from now on wait too: the credential was refused.
            refresh = .needed
            return .wait
        }
        refresh = .needed
        return .waitAndRefresh
    }

    /// The refresh produced `credential` at `now`: it is the current one now; returns the
    /// waiters to give it to, and its generation.
    mutating func refreshed(_ credential: Authenticator.Credential, at now: Date) -> (waiters: [Waiter], generation: Int) {
        let credential = credential.dated(now)
        self.credential = credential
        issuedAt = credential.issuedAt ?? now
        lastFailure = nil
        generation += 1
        refresh = nil
        defer { waiters = [] }
        return (waiters, generation)
    }

    /// The refresh failed with `failure`: the credential is cleared (no request uses the old
    /// one again); returns the waiters to fail.
    mutating func refreshFailed(_ failure: AuthenticationFailure) -> [Waiter] {
        lastFailure = failure
        credential = nil
        issuedAt = nil
        generation += 1
        refresh = nil
        defer { waiters = [] }
        return waiters
    }

    /// The app set (or, with `nil`, removed) the credential: signed in or out.
    mutating func set(_ credential: Authenticator.Credential?) {
        self.credential = credential
        issuedAt = credential?.issuedAt
        lastFailure = nil
        generation += 1
    }
}
