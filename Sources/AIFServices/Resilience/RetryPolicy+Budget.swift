import Foundation
@_spi(CrossModule) import AIFTransport

extension RetryPolicy {
    /// Caps the retries a proxy makes to a share of the loads it sends, over a sliding window, so
    /// that a failing backend is not sent three times its traffic: past the cap, failures are
    /// delivered at once.
    ///
    /// A retry is allowed while the retries made in the last ``window`` stay within
    /// `ratio × loads + minimumRetries` — the floor lets a quiet client still retry its few
    /// requests. The window moves on the clock of the proxy that counts in it. Thread-safe; one
    /// per `APIProxy`.
    public final class Budget: Sendable {
        /// Retries allowed per load sent (0.2: one retry for five loads).
        public let ratio: Double
        /// Retries allowed in every window whatever the traffic.
        public let minimumRetries: Int
        /// How far back loads and retries are counted.
        public let window: Duration

        /// The window in ten slots; each counts the loads and retries of its tenth.
        private struct Slot {
            var epoch: Int64 = -1
            var loads = 0
            var retries = 0
        }

        private static let slotCount = 10
        private let slotLength: Duration
        private let slots = Locked([Slot](repeating: Slot(), count: Budget.slotCount))

        /// Creates a budget.
        ///
        /// - Parameters:
        ///   - ratio: Retries per load; 0.2 by default.
        ///   - minimumRetries: Retries always allowed per window; 10 by default.
        ///   - window: The sliding window; 10 seconds by default.
        public init(ratio: Double = 0.2, minimumRetries: Int = 10, window: Duration = .seconds(10)) {
            self.ratio = max(ratio, 0)
            self.minimumRetries = max(minimumRetries, 0)
            self.window = window > .zero ? window : .seconds(10)
            slotLength = self.window / Self.slotCount
        }

        /// No cap: every retry the policies allow is made.
        public static var unlimited: Budget { Budget(ratio: .infinity, minimumRetries: .max) }

        /// Counts a load sent (whether its policy retries or not: the budget is a share of the
        /// proxy's traffic), at `now` on the proxy's clock (``LoadClock/now``).
        package func recordLoad(at now: Duration) {
            let epoch = epoch(at: now)
            slots.withLock { slots in
                let index = Self.index(of: epoch)
                if slots[index].epoch != epoch { slots[index] = Slot(epoch: epoch) }
                slots[index].loads += 1
            }
        }

        /// Takes a retry from the budget at `now` on the proxy's clock; `false` when it is spent.
        package func spendRetry(at now: Duration) -> Bool {
            let epoch = epoch(at: now)
            return slots.withLock { slots in
                var loads = 0
                var retries = 0
                for slot in slots where slot.epoch > epoch - Int64(Self.slotCount) {
                    loads += slot.loads
                    retries += slot.retries
                }
                let allowed = ratio.isInfinite ? Double.infinity : ratio * Double(loads) + Double(minimumRetries)
                guard Double(retries + 1) <= allowed else { return false }
                let index = Self.index(of: epoch)
                if slots[index].epoch != epoch { slots[index] = Slot(epoch: epoch) }
                slots[index].retries += 1
                return true
            }
        }

        /// The slot `now` falls in, counted from the clock's origin.
        private func epoch(at now: Duration) -> Int64 {
            Int64((now / slotLength).rounded(.down))
        }

        private static func index(of epoch: Int64) -> Int {
            let count = Int64(slotCount)
            return Int((epoch % count + count) % count)
        }
    }
}
