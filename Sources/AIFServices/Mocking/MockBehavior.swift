public import Foundation

extension ServiceEnvironment {
    /// What makes a service environment a **mock**: loads are answered from fixture files instead
    /// of a server, after an injected latency, and a share of them fail on purpose.
    ///
    /// Declared in a config file like any other environment, and selected like one
    /// (`AIF_ENVIRONMENT=mock`, or in code):
    ///
    /// ```json
    /// "environments": {
    ///     "mock": { "fixtures": "fixtures/shop", "latencyMs": [50, 200], "failureRate": 0.05, "seed": 7 }
    /// }
    /// ```
    ///
    /// Everything above the transport runs unchanged — signing, plugins, reformers, paging,
    /// the cache, retries — so a mock exercises the app's whole path to the network. See
    /// ``FixtureTransport`` for the fixture files.
    public struct MockBehavior: Sendable, Hashable {
        /// The directory of fixture files.
        public var fixtures: URL
        /// The range each answer's latency is drawn from; none by default.
        public var latency: ClosedRange<Duration>
        /// The share of loads that fail on purpose, from 0 to 1; none by default.
        public var failureRate: Double
        /// The failures drawn from when one is injected.
        public var failures: [Failure]
        /// Seeds the draws of latency and failures, so that a run can be repeated; `nil` draws
        /// from the system's generator.
        public var seed: UInt64?

        /// Creates a mock behavior.
        ///
        /// - Parameters:
        ///   - fixtures: The directory of fixture files.
        ///   - latency: The latency range; none by default.
        ///   - failureRate: The share of loads that fail; none by default.
        ///   - failures: What an injected failure is; by default a 500, a 503, a timeout or a
        ///     dropped connection, equally likely.
        ///   - seed: Seeds the draws; `nil` by default.
        public init(
            fixtures: URL, latency: ClosedRange<Duration> = .zero ... .zero, failureRate: Double = 0,
            failures: [Failure] = [.status(500), .status(503), .timeout, .connectionDropped], seed: UInt64? = nil
        ) {
            self.fixtures = fixtures
            self.latency = latency
            self.failureRate = min(1, max(0, failureRate))
            self.failures = failures.isEmpty ? [.status(503)] : failures
            self.seed = seed
        }
    }
}

extension ServiceEnvironment.MockBehavior {
    /// A failure a mock environment injects.
    public enum Failure: Sendable, Hashable {
        /// An answer with this HTTP status and a short JSON body saying it was injected.
        case status(Int)
        /// The request times out (``/AIFTransport/TransportError/Code-swift.struct/totalTimeout``).
        case timeout
        /// The connection drops before an answer
        /// (``/AIFTransport/TransportError/Code-swift.struct/connectionDropped``).
        case connectionDropped
    }
}

/// A small seeded generator (SplitMix64): the same seed gives the same draws, on every
/// platform.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
