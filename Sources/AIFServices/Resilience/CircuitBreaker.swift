import Foundation
@_spi(CrossModule) import AIFTransport

/// Stops sending to a backend that is down: one per service environment (and so per backend
/// host) that opts in with a ``Policy``, shared by every proxy that calls it.
///
/// ```
///  closed ── failuresToOpen failures in a row ──▶ open ── coolDown ──▶ half-open
///    ▲                                             ▲                      │
///    └────────── every probe succeeded ────────────┼───── a probe failed ─┘
/// ```
///
/// While **closed**, every request goes out; a counted failure (``Policy/counted``) adds one to
/// a run that any other answer ends. While **open**, no request goes out: each load fails at
/// once with `APIError.Kind.circuitOpen`, saying when the next probe goes out, and a retry is not
/// made. Once the cool-down has passed the circuit is **half-open**: up to ``Policy/probes``
/// requests go out as probes, the others are refused as while open; when every probe has
/// succeeded the circuit closes, and the first probe that fails opens it again for another
/// cool-down. An answer that says nothing of the backend's health (a cancellation, a 404) counts
/// neither way.
///
/// The choices, beside the libraries of the field: a run of consecutive failures, as Polly's
/// basic circuit breaker and Envoy's `consecutive_5xx` outlier detection, rather than
/// resilience4j's failure rate over a sliding window — a backend that is down fails every
/// request, and a count opens its circuit after a known number of them at any traffic, where a
/// rate needs a minimum number of calls; a fixed cool-down, as resilience4j's
/// `waitDurationInOpenState` and Polly's `BreakDuration` (Envoy lengthens its ejection with
/// each one); several probes at once, as resilience4j's `permittedNumberOfCallsInHalfOpenState`.
/// Slow answers do not count (resilience4j's slow-call rate): the timeouts that end them do.
public final class CircuitBreaker: Sendable {
    /// When a circuit opens and how it is probed.
    public struct Policy: Sendable, Hashable, CustomStringConvertible {
        /// What counts as a failure of the backend.
        public enum Failure: String, Sendable, Hashable, CaseIterable {
            /// The connection or the whole request took too long, or the transfer stalled.
            case timeout
            /// The backend could not be reached (refused, unreachable), or the connection closed
            /// before it answered.
            case connection
            /// The backend answered with one of ``Policy/serverErrorStatuses``.
            case serverError
        }

        /// Failures in a row that open the circuit; 5 by default.
        public var failuresToOpen: Int
        /// How long the circuit stays open before probes go out; 30 seconds by default.
        public var coolDown: Duration
        /// How many probes go out at once while half-open, all of which must succeed to close
        /// the circuit; 1 by default.
        public var probes: Int
        /// The failures that count; all three kinds by default.
        public var counted: Set<Failure>
        /// The statuses that are ``Failure/serverError``: 500, 502, 503 and 504 by default (a 501
        /// or a 505 says the request was wrong, not that the backend is down).
        public var serverErrorStatuses: Set<Int>

        /// Creates a policy.
        ///
        /// - Parameters:
        ///   - failuresToOpen: Failures in a row that open the circuit (at least 1); 5 by default.
        ///   - coolDown: How long it stays open; 30 seconds by default.
        ///   - probes: Probes at once while half-open (at least 1); 1 by default.
        ///   - counted: The failures that count; all by default.
        ///   - serverErrorStatuses: The statuses that count as the backend failing.
        public init(
            failuresToOpen: Int = 5, coolDown: Duration = .seconds(30), probes: Int = 1, counted: Set<Failure> = Set(Failure.allCases),
            serverErrorStatuses: Set<Int> = [500, 502, 503, 504]
        ) {
            self.failuresToOpen = max(1, failuresToOpen)
            self.coolDown = max(.zero, coolDown)
            self.probes = max(1, probes)
            self.counted = counted
            self.serverErrorStatuses = serverErrorStatuses
        }

        /// `opens after 5 failures in a row (timeouts, connection failures, 500, 502, 503, 504),
        /// probed by 1 request after 30 s`.
        public var description: String {
            var kinds: [String] = []
            if counted.contains(.timeout) { kinds.append("timeouts") }
            if counted.contains(.connection) { kinds.append("connection failures") }
            if counted.contains(.serverError) { kinds += serverErrorStatuses.sorted().map(String.init) }
            let probing = probes == 1 ? "1 request" : "\(probes) requests"
            return "opens after \(failuresToOpen) failures in a row (\(kinds.joined(separator: ", "))), probed by \(probing) after \(RetryPolicy.Reason.seconds(coolDown)) s"
        }

        /// What an attempt's outcome says of the backend's health.
        package func verdict(on result: Result<HTTPResponse, any Error>) -> Machine.Verdict {
            switch result {
            case .success(let response):
                return serverErrorStatuses.contains(response.statusCode) && counted.contains(.serverError) ? .failure : .success
            case .failure(let error):
                guard let transport = error as? TransportError else { return .neither }
                if transport.isTimeout { return counted.contains(.timeout) ? .failure : .neither }
                if transport.isCannotConnect || transport.code == .connectionDropped || transport.code == .responseLost {
                    return counted.contains(.connection) ? .failure : .neither
                }
                return .neither
            }
        }
    }

    /// Where a circuit stands.
    public enum State: Sendable, Hashable, CustomStringConvertible {
        /// Requests go out.
        case closed
        /// No request goes out until the cool-down has passed.
        case open
        /// Probes go out.
        case halfOpen

        /// `closed`, `open` or `half-open`.
        public var description: String {
            switch self {
            case .closed: "closed"
            case .open: "open"
            case .halfOpen: "half-open"
            }
        }
    }

    /// A circuit that changed state.
    public struct Change: Sendable, Hashable {
        /// The state it left.
        public var from: State
        /// The state it is in.
        public var to: State
        /// How many failures in a row opened it (for a change to ``State/open``).
        public var failures: Int
        /// How long it stays open (for a change to ``State/open``).
        public var openFor: Duration?
    }

    /// The decisions of a circuit, as a value: told what time it is and how each request ended,
    /// it says whether the next may go out. Pure, so that every transition is tested without
    /// real time.
    package struct Machine: Sendable, Equatable {
        /// What an outcome says of the backend.
        package enum Verdict: Sendable, Equatable {
            case success, failure, neither
        }

        /// Whether a request may go out.
        package enum Admission: Sendable, Equatable {
            /// It goes out.
            case send
            /// It goes out as one of the half-open circuit's probes: its outcome must be recorded
            /// as a probe's.
            case probe
            /// It does not: the circuit is open, the next probe going out after `nextProbeIn`
            /// (`nil` while the probes allowed are out).
            case refuse(nextProbeIn: Duration?)
        }

        private enum Phase: Sendable, Equatable {
            case closed(failures: Int)
            case open(until: Duration, failures: Int)
            case halfOpen(out: Int, succeeded: Int)
        }

        private let policy: Policy
        private var phase = Phase.closed(failures: 0)

        package init(_ policy: Policy) {
            self.policy = policy
        }

        package var state: State {
            switch phase {
            case .closed: .closed
            case .open: .open
            case .halfOpen: .halfOpen
            }
        }

        /// Whether a request may go out at `now`; the change, when the cool-down has just passed.
        package mutating func admit(at now: Duration) -> (Admission, Change?) {
            switch phase {
            case .closed:
                return (.send, nil)
            case .open(let until, _):
                guard now >= until else { return (.refuse(nextProbeIn: until - now), nil) }
                phase = .halfOpen(out: 1, succeeded: 0)
                return (.probe, Change(from: .open, to: .halfOpen, failures: 0))
            case .halfOpen(let out, let succeeded):
                guard out + succeeded < policy.probes else { return (.refuse(nextProbeIn: nil), nil) }
                phase = .halfOpen(out: out + 1, succeeded: succeeded)
                return (.probe, nil)
            }
        }

        /// Records how a request ended (`probe` when it was admitted as one); the change it made.
        package mutating func record(_ verdict: Verdict, probe: Bool, at now: Duration) -> Change? {
            switch phase {
            case .closed(let failures):
                switch verdict {
                case .failure:
                    guard failures + 1 >= policy.failuresToOpen else {
                        phase = .closed(failures: failures + 1)
                        return nil
                    }
                    return open(from: .closed, failures: failures + 1, at: now)
                case .success:
                    phase = .closed(failures: 0)
                    return nil
                case .neither:
                    return nil
                }
            case .open:
                // A request sent before the circuit opened: it tells nothing new.
                return nil
            case .halfOpen(let out, let succeeded):
                guard probe else { return nil }
                switch verdict {
                case .failure:
                    return open(from: .halfOpen, failures: 1, at: now)
                case .success:
                    guard succeeded + 1 >= policy.probes else {
                        phase = .halfOpen(out: out - 1, succeeded: succeeded + 1)
                        return nil
                    }
                    phase = .closed(failures: 0)
                    return Change(from: .halfOpen, to: .closed, failures: 0)
                case .neither:
                    // The probe's place goes to the next request.
                    phase = .halfOpen(out: out - 1, succeeded: succeeded)
                    return nil
                }
            }
        }

        /// Whether, at `now`, the circuit refuses requests: open, its cool-down not over.
        package func isOpen(at now: Duration) -> Duration? {
            guard case .open(let until, _) = phase, now < until else { return nil }
            return until - now
        }

        private mutating func open(from state: State, failures: Int, at now: Duration) -> Change {
            phase = .open(until: now + policy.coolDown, failures: failures)
            return Change(from: state, to: .open, failures: failures, openFor: policy.coolDown)
        }
    }

    /// The circuit's policy.
    public let policy: Policy
    private let machine: Locked<Machine>

    /// Creates a closed circuit.
    ///
    /// - Parameter policy: When it opens and how it is probed.
    public init(policy: Policy) {
        self.policy = policy
        machine = Locked(Machine(policy))
    }

    /// Where the circuit stands.
    public var state: State {
        machine.withLock { $0.state }
    }

    /// Whether a request may go out at `now`, on the loads' clock.
    package func admit(at now: Duration) -> (Machine.Admission, Change?) {
        machine.withLock { $0.admit(at: now) }
    }

    /// Records how a request ended.
    package func record(_ result: Result<HTTPResponse, any Error>, probe: Bool, at now: Duration) -> Change? {
        let verdict = policy.verdict(on: result)
        return machine.withLock { $0.record(verdict, probe: probe, at: now) }
    }

    /// How long the circuit stays open from `now`, or `nil` when it lets requests out.
    package func remainingOpen(at now: Duration) -> Duration? {
        machine.withLock { $0.isOpen(at: now) }
    }
}
