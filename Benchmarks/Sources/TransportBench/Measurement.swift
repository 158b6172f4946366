import Foundation

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
    var failures: Int

    /// The line a client process prints; the comparison parses it back.
    var line: String {
        "RESULT rps=\(requestsPerSecond) cpu_us=\(cpuMicrosecondsPerRequest) maxrss_kb=\(peakMemoryKiB) failures=\(failures)"
    }

    init(requestsPerSecond: Double, cpuMicrosecondsPerRequest: Double, peakMemoryKiB: Int, failures: Int) {
        self.requestsPerSecond = requestsPerSecond
        self.cpuMicrosecondsPerRequest = cpuMicrosecondsPerRequest
        self.peakMemoryKiB = peakMemoryKiB
        self.failures = failures
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
        self.init(requestsPerSecond: rps, cpuMicrosecondsPerRequest: cpu, peakMemoryKiB: rss, failures: failures)
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
    let before = processUsage()
    let start = ContinuousClock.now
    let (completed, failures) = try await client.run(seconds: seconds)
    let elapsed = ContinuousClock.now - start
    let after = processUsage()
    try await client.close()
    let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Measurement(
        requestsPerSecond: Double(completed) / elapsedSeconds,
        cpuMicrosecondsPerRequest: completed > 0 ? (after.cpuSeconds - before.cpuSeconds) / Double(completed) * 1e6 : 0,
        peakMemoryKiB: after.peakKiB,
        failures: failures
    )
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
