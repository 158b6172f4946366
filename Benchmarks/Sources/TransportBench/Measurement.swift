import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One client's figures from one run.
struct Measurement: Sendable {
    var requestsPerSecond: Double
    /// Client CPU time (user + system) per completed request, in microseconds.
    var cpuMicrosecondsPerRequest: Double
    /// Peak resident memory of the client process, in KiB.
    var peakMemoryKiB: Int
    /// Requests that failed, other than the timeouts the run asked for.
    var failures: Int
    /// How late the timeouts the run asked for ended (``ClientSettings/timeoutEvery``).
    var lateness = TimeoutLateness.Summary()

    /// The line a client process prints; the comparison parses it back.
    var line: String {
        "RESULT rps=\(requestsPerSecond) cpu_us=\(cpuMicrosecondsPerRequest) maxrss_kb=\(peakMemoryKiB) failures=\(failures)"
            + " timeouts=\(lateness.count) late_p50=\(lateness.p50) late_p99=\(lateness.p99) late_max=\(lateness.max)"
    }

    init(requestsPerSecond: Double, cpuMicrosecondsPerRequest: Double, peakMemoryKiB: Int, failures: Int, lateness: TimeoutLateness.Summary = .init()) {
        self.requestsPerSecond = requestsPerSecond
        self.cpuMicrosecondsPerRequest = cpuMicrosecondsPerRequest
        self.peakMemoryKiB = peakMemoryKiB
        self.failures = failures
        self.lateness = lateness
    }

    init?(line: String) {
        guard line.hasPrefix("RESULT ") else { return nil }
        var fields: [String: String] = [:]
        for pair in line.dropFirst(7).split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let rps = fields["rps"].flatMap(Double.init), let cpu = fields["cpu_us"].flatMap(Double.init),
            let rss = fields["maxrss_kb"].flatMap(Int.init), let failures = fields["failures"].flatMap(Int.init)
        else { return nil }
        var lateness = TimeoutLateness.Summary()
        if let count = fields["timeouts"].flatMap(Int.init), let p50 = fields["late_p50"].flatMap(Double.init),
            let p99 = fields["late_p99"].flatMap(Double.init), let max = fields["late_max"].flatMap(Double.init)
        {
            lateness = TimeoutLateness.Summary(count: count, p50: p50, p99: p99, max: max)
        }
        self.init(requestsPerSecond: rps, cpuMicrosecondsPerRequest: cpu, peakMemoryKiB: rss, failures: failures, lateness: lateness)
    }
}

/// How late the timeouts a run asked for ended, in milliseconds after each request's total
/// timeout: noted by the clients as they end, summarised by ``measure(_:_:warmup:seconds:)``.
enum TimeoutLateness {
    /// Percentiles of one run's lateness.
    struct Summary: Sendable {
        var count = 0
        var p50 = 0.0
        var p99 = 0.0
        var max = 0.0
    }

    private static let noted = Mutex<[Double]>([])

    static func note(_ milliseconds: [Double]) {
        noted.withLock { $0 += milliseconds }
    }

    static func note(since start: ContinuousClock.Instant, timeoutMilliseconds: Int) {
        let elapsed = (ContinuousClock.now - start).components
        let milliseconds = Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
        note([milliseconds - Double(timeoutMilliseconds)])
    }

    /// Summarises what was noted since the last call, and forgets it.
    static func take() -> Summary {
        let values = noted.withLock { values in
            defer { values = [] }
            return values.sorted()
        }
        guard let last = values.last else { return Summary() }
        func percentile(_ fraction: Double) -> Double {
            values[min(values.count - 1, Int((Double(values.count) * fraction).rounded(.up)) - 1)]
        }
        return Summary(count: values.count, p50: percentile(0.5), p99: percentile(0.99), max: last)
    }
}

/// CPU time this process has used, in seconds, and its peak resident memory in KiB.
func processUsage() -> (cpuSeconds: Double, peakKiB: Int) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return (user + system, usage.ru_maxrss)
}

/// Runs one client: a warm-up, then the measured run.
func measure(_ kind: ClientKind, _ settings: ClientSettings, warmup: Double, seconds: Double) async throws -> Measurement {
    let client = try kind.make(settings)
    _ = try await client.run(seconds: warmup)
    _ = TimeoutLateness.take()
    let before = processUsage()
    let start = ContinuousClock.now
    let (completed, failures) = try await client.run(seconds: seconds)
    let elapsed = ContinuousClock.now - start
    let after = processUsage()
    try await client.close()
    let lateness = TimeoutLateness.take()
    let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Measurement(
        requestsPerSecond: Double(completed) / elapsedSeconds,
        cpuMicrosecondsPerRequest: completed > 0 ? (after.cpuSeconds - before.cpuSeconds) / Double(completed) * 1e6 : 0,
        peakMemoryKiB: after.peakKiB,
        failures: failures - lateness.count,
        lateness: lateness
    )
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
