/// Passes a transfer's progress on at a sane rate: at most one report per interval (10 a
/// second by default), the first and the completing ones always — and, when the transfer
/// ends, the last one held back — each with the throughput since the one before.
package final class ProgressThrottle: Sendable {
    private struct State {
        var lastTime: UInt64?
        var lastBytes: Int64 = 0
        var lastReported: TransferProgress?
        var bytesPerSecond: Double?
        /// The latest report held back by the interval.
        var held: TransferProgress?

        /// Records `progress` as passed on, with the throughput since the report before.
        mutating func pass(_ progress: TransferProgress, at now: UInt64) -> TransferProgress {
            let bytes = progress.bytesSent + progress.bytesReceived
            if let last = lastTime, now > last {
                bytesPerSecond = Double(bytes - lastBytes) / (Double(now - last) / 1e9)
            }
            lastTime = now
            lastBytes = bytes
            held = nil
            var passed = progress
            passed.bytesPerSecond = bytesPerSecond
            lastReported = passed
            return passed
        }
    }

    private let state = Locked(State())
    private let interval: UInt64
    private let deliver: @Sendable (TransferProgress) -> Void

    /// - Parameters:
    ///   - interval: The least time between two reports.
    ///   - deliver: Gets the reports (on the thread that reports).
    package init(interval: Duration = .milliseconds(100), deliver: @escaping @Sendable (TransferProgress) -> Void) {
        let (seconds, attoseconds) = interval.components
        self.interval = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        self.deliver = deliver
    }

    /// A raw report from the transport.
    package func report(_ progress: TransferProgress) {
        let now = TransferSteering.now()
        let passed = state.withLock { state -> TransferProgress? in
            guard progress != state.lastReported?.withoutRate else { return nil }
            if let last = state.lastTime, !Self.isComplete(progress), now - last < interval {
                state.held = progress
                return nil
            }
            return state.pass(progress, at: now)
        }
        if let passed { deliver(passed) }
    }

    /// The transfer ended: passes on the report held back, if any.
    package func flush() {
        let now = TransferSteering.now()
        let passed = state.withLock { state -> TransferProgress? in
            guard let held = state.held else { return nil }
            return state.pass(held, at: now)
        }
        if let passed { deliver(passed) }
    }

    private static func isComplete(_ progress: TransferProgress) -> Bool {
        if let total = progress.totalBytesToReceive, total > 0, progress.bytesReceived >= total { return true }
        if let total = progress.totalBytesToSend, total > 0, progress.bytesSent >= total, progress.bytesReceived == 0 { return true }
        return false
    }
}

extension TransferProgress {
    /// The report without its throughput, to compare with a raw one.
    fileprivate var withoutRate: TransferProgress {
        var raw = self
        raw.bytesPerSecond = nil
        return raw
    }
}
