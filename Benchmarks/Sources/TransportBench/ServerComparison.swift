import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A Swift server calling its backend, under load: the server sample (Samples/ServerSample, this
/// SDK, run with `--no-cache` so that every request calls the backend) and its twin calling the
/// backend with AsyncHTTPClient directly (``ServerTwin``), in turn, each on CPU 1, driven by wrk
/// at a fixed concurrency from CPU 0, beside nginx as the backend. Figures: requests per second,
/// p50 and p99 latency (wrk's), the app's CPU time a request, and — from a last, sampled run of
/// each app (perf) — the share of the app's CPU its HTTP client takes.
struct ServerComparison {
    enum App: String, CaseIterable {
        case sdk, ahc

        var title: String {
            switch self {
            case .sdk: "sdk (server sample)"
            case .ahc: "ahc (its twin)"
            }
        }
    }

    /// One app's figures from one run of wrk.
    struct Run {
        var requestsPerSecond: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        /// The app's CPU time (user + system, every thread) per completed request.
        var cpuMicrosecondsPerRequest: Double
        /// The app's CPU time over the run's wall time: 1 when it kept its CPU busy.
        var cpuUse: Double
        /// Answers other than 200, and wrk's socket errors.
        var failures: Int
    }

    /// The server sample's executable (run.sh builds it in the root package).
    var samplePath: String
    var rounds: Int
    var concurrencies = [16, 64]
    var seconds = 5.0
    var warmup = 1.0
    /// Seconds of the sampled run of each app at the highest concurrency (0 skips it).
    var profileSeconds = 5.0

    /// Runs the comparison against `backend` (``BenchServer/serveGoods(count:)``'s URL; `nil`
    /// when the server cannot serve the articles).
    func run(backend: String?, pinned: Bool) throws {
        guard let backend else {
            return say("\nServer: skipped (its backend is nginx, which is not installed)")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk") else {
            return say("\nServer: skipped (wrk is not installed; make bench installs it)")
        }
        say("\nServer: GET /goods/{id} of a Hummingbird app calling nginx for the article — the server sample (this SDK, --no-cache) "
            + "and its twin on AsyncHTTPClient in turn\(pinned ? " (on CPU 1; wrk -t1 and nginx on CPU 0)" : ""); "
            + "\(rounds) rounds × \(seconds) s per app and concurrency after \(warmup) s warm-up, medians")

        // runs[concurrency][app] = one run per round
        var runs: [Int: [App: [Run]]] = [:]
        for round in 0..<rounds {
            let order = App.allCases.indices.map { App.allCases[($0 + round) % App.allCases.count] }
            for app in order {
                let process = try AppProcess(app, samplePath: samplePath, backend: backend, pinned: pinned)
                defer { process.stop() }
                for concurrency in concurrencies {
                    let run = try measure(process, concurrency: concurrency, seconds: seconds, pinned: pinned)
                    if run.failures > 0 { say("  warning: \(app.rawValue) c=\(concurrency): \(run.failures) failed requests") }
                    runs[concurrency, default: [:]][app, default: []].append(run)
                }
            }
            say("server round \(round + 1)/\(rounds) done")
        }
        var lines = summarize(runs)
        if profileSeconds > 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/perf"), let concurrency = concurrencies.max() {
            var shares: [(App, ClientShare)] = []
            for app in App.allCases {
                let process = try AppProcess(app, samplePath: samplePath, backend: backend, pinned: pinned)
                defer { process.stop() }
                shares.append((app, try clientShare(of: process, concurrency: concurrency, pinned: pinned)))
            }
            say("client's share of the app's CPU at c=\(concurrency) (perf, \(profileSeconds) s): "
                + shares.map { "\($0.0.rawValue) \($0.1.summary)" }.joined(separator: "; "))
            lines.append("CLIENT-SHARE c=\(concurrency) " + shares.map { "\($0.0.rawValue)=" + String(format: "%.2f", $0.1.fraction) }.joined(separator: " "))
        }
        for line in lines { say(line) }
    }

    /// Prints a table per concurrency (medians over rounds) and returns the `SERVER` lines.
    private func summarize(_ runs: [Int: [App: [Run]]]) -> [String] {
        for concurrency in concurrencies {
            let byApp = runs[concurrency] ?? [:]
            say("== server c=\(concurrency)")
            say("app".padding(toLength: 22, withPad: " ", startingAt: 0) + "    req/s   p50 ms   p99 ms   CPU µs/req   CPU use")
            for app in App.allCases {
                guard let all = byApp[app] else { continue }
                say(app.title.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + String(format: "%9.0f %8.2f %8.2f %12.1f %9.2f", median(all.map(\.requestsPerSecond)), median(all.map(\.p50Milliseconds)),
                        median(all.map(\.p99Milliseconds)), median(all.map(\.cpuMicrosecondsPerRequest)), median(all.map(\.cpuUse))))
            }
        }
        return concurrencies.compactMap { concurrency in
            guard let sdk = runs[concurrency]?[.sdk], let ahc = runs[concurrency]?[.ahc] else { return nil }
            func figure(_ value: KeyPath<Run, Double>, _ format: String) -> String {
                "sdk=" + String(format: format, median(sdk.map { $0[keyPath: value] })) + " ahc=" + String(format: format, median(ahc.map { $0[keyPath: value] }))
            }
            let ratio = median(zip(sdk, ahc).map { $0.requestsPerSecond / $1.requestsPerSecond })
            return "SERVER c=\(concurrency) sdk/ahc=" + String(format: "%.2f", ratio) + " p50-ms " + figure(\.p50Milliseconds, "%.2f")
                + " p99-ms " + figure(\.p99Milliseconds, "%.2f") + " cpu-us " + figure(\.cpuMicrosecondsPerRequest, "%.1f")
        }
    }

    /// One run of wrk against a running app: a warm-up, then the measured run.
    private func measure(_ app: AppProcess, concurrency: Int, seconds: Double, pinned: Bool) throws -> Run {
        _ = try wrk(app.url, concurrency: concurrency, seconds: warmup, pinned: pinned)
        let before = try app.cpuSeconds()
        let started = ContinuousClock.now
        let report = try wrk(app.url, concurrency: concurrency, seconds: seconds, pinned: pinned)
        let wall = started.duration(to: .now)
        let cpu = try app.cpuSeconds() - before
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        return Run(
            requestsPerSecond: report.requestsPerSecond, p50Milliseconds: report.p50Milliseconds, p99Milliseconds: report.p99Milliseconds,
            cpuMicrosecondsPerRequest: report.requests > 0 ? cpu * 1e6 / Double(report.requests) : .nan,
            cpuUse: cpu / wallSeconds, failures: report.failures)
    }

    /// The share of the app's CPU its HTTP client takes, from perf's samples over one run at
    /// `concurrency`: for this SDK, its transport's thread (libcurl and the kernel's work for it
    /// included) and its own code on the app's threads; for AsyncHTTPClient, its own code (its
    /// SwiftNIO handlers run on the event loops it shares with the server, where samples cannot
    /// tell whose they are). Each is a lower bound: allocation and the standard library's code
    /// called from either are not counted.
    private func clientShare(of app: AppProcess, concurrency: Int, pinned: Bool) throws -> ClientShare {
        _ = try wrk(app.url, concurrency: concurrency, seconds: warmup, pinned: pinned)
        let data = FileManager.default.temporaryDirectory.appending(path: "aif-bench-perf-\(getpid())-\(app.app.rawValue).data").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: "/usr/bin/perf")
        recorder.arguments = ["record", "-q", "-F", "499", "-p", "\(app.process.processIdentifier)", "-o", data, "--", "sleep", "\(profileSeconds)"]
        recorder.standardError = FileHandle.nullDevice
        try runWithChildSignalsUnblocked(recorder)
        _ = try wrk(app.url, concurrency: concurrency, seconds: profileSeconds, pinned: pinned)
        let deadline = ContinuousClock.now + .seconds(profileSeconds + 15)
        while recorder.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if recorder.isRunning {
            kill(recorder.processIdentifier, SIGKILL)
            recorder.waitUntilExit()
            throw BenchSetupError(description: "perf record was still running 15 s after its run (started with SIGCHLD blocked?)")
        }
        guard recorder.terminationStatus == 0 else { throw BenchSetupError(description: "perf record failed (exit \(recorder.terminationStatus))") }
        var share = ClientShare()
        for line in try shell("perf script -i '\(data)' -F comm,ip,sym,dso 2>/dev/null").split(separator: "\n") {
            share.count(String(line), for: app.app)
        }
        return share
    }

    /// Starts `process` with SIGCHLD, SIGINT and SIGTERM unblocked. A child inherits the signal
    /// mask of the thread that starts it, and the threads this comparison runs on (the
    /// cooperative pool's, or the main thread once it serves the main queue) block them: perf,
    /// its SIGCHLD blocked, never hears that the `sleep` it samples for has ended, and spins.
    private func runWithChildSignalsUnblocked(_ process: Process) throws {
        var signals = sigset_t(), previous = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGCHLD, SIGINT, SIGTERM] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
    }

    /// wrk's figures for one run.
    struct WrkReport {
        var requests = 0
        var requestsPerSecond = 0.0
        var p50Milliseconds = Double.nan
        var p99Milliseconds = Double.nan
        var failures = 0
    }

    /// Runs wrk (one thread, `concurrency` connections, pinned to CPU 0 beside the backend) with
    /// a W3C trace context on each request, which both apps pass on.
    private func wrk(_ url: String, concurrency: Int, seconds: Double, pinned: Bool) throws -> WrkReport {
        let duration = max(1, Int(seconds.rounded()))
        let output = try shell((pinned ? "/usr/bin/taskset -c 0 " : "")
            + "/usr/bin/wrk -t1 -c\(concurrency) -d\(duration)s --latency --timeout 10s "
            + "-H 'traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' '\(url)'")
        var report = WrkReport()
        for line in output.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if line.hasPrefix("Requests/sec:"), fields.count > 1 {
                report.requestsPerSecond = Double(fields[1]) ?? 0
            } else if line.contains(" requests in "), let count = fields.first.flatMap({ Int($0) }) {
                report.requests = count
            } else if line.hasPrefix("50%"), fields.count > 1 {
                report.p50Milliseconds = Self.milliseconds(fields[1])
            } else if line.hasPrefix("99%"), fields.count > 1 {
                report.p99Milliseconds = Self.milliseconds(fields[1])
            } else if line.hasPrefix("Non-2xx or 3xx responses:"), let count = fields.last.flatMap({ Int($0) }) {
                report.failures += count
            } else if line.hasPrefix("Socket errors:") {
                // "Socket errors: connect 0, read 0, write 0, timeout 0"
                report.failures += fields.compactMap { Int($0.trimmingCharacters(in: .punctuationCharacters)) }.reduce(0, +)
            }
        }
        guard report.requests > 0 else { throw BenchSetupError(description: "wrk completed no request against \(url): \(output)") }
        return report
    }

    /// `812.00us`, `1.23ms`, `2.00s` in milliseconds.
    static func milliseconds(_ text: Substring) -> Double {
        for (unit, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(unit) {
            return (Double(text.dropLast(unit.count)) ?? .nan) * scale
        }
        return .nan
    }
}

/// The samples perf took of an app, sorted by whose work each was.
struct ClientShare {
    private(set) var total = 0
    /// Samples on this SDK's transport thread (`aif-curl`): libcurl, the loop, the kernel's work for them.
    private(set) var onClientThread = 0
    /// Samples in the client's own code on the app's other threads.
    private(set) var inClientCode = 0

    var fraction: Double { total > 0 ? Double(onClientThread + inClientCode) / Double(total) : .nan }

    /// Counts one line of `perf script -F comm,ip,sym,dso`: the thread's name, the address, the
    /// symbol, its file.
    mutating func count(_ line: String, for app: ServerComparison.App) {
        total += 1
        switch app {
        case .sdk:
            if line.drop(while: \.isWhitespace).hasPrefix("aif-curl") {
                onClientThread += 1
            } else if ["AIFNetworking", "AIFServices", "AIFTransport", "libcurl"].contains(where: line.contains) {
                inClientCode += 1
            }
        case .ahc:
            if line.contains("AsyncHTTPClient") { inClientCode += 1 }
        }
    }

    /// `31% (its transport thread 22%, its code on the app's threads 9%; 2480 samples)`.
    var summary: String {
        func percent(_ part: Int) -> String { total > 0 ? String(format: "%.0f%%", Double(part) * 100 / Double(total)) : "-" }
        let parts = onClientThread > 0
            ? "its transport thread \(percent(onClientThread)), its code on the app's threads \(percent(inClientCode))"
            : "its own code"
        return "\(percent(onClientThread + inClientCode)) (\(parts); \(total) samples)"
    }
}

/// One app under test, started on CPU 1 and listening on a port of its own.
final class AppProcess {
    let app: ServerComparison.App
    let process = Process()
    let url: String
    private let log: URL

    init(_ app: ServerComparison.App, samplePath: String, backend: String, pinned: Bool) throws {
        self.app = app
        let port = try BenchServer.freePort()
        url = "http://127.0.0.1:\(port)/goods/1"
        let command: [String]
        switch app {
        case .sdk:
            command = [samplePath, "--backend", backend, "--port", "\(port)", "--no-cache", "--deadline", "5"]
        case .ahc:
            command = [try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), "server-twin", "--backend", backend, "--port", "\(port)"]
        }
        process.executableURL = URL(fileURLWithPath: pinned ? "/usr/bin/taskset" : command[0])
        process.arguments = (pinned ? ["-c", "1"] + command : Array(command.dropFirst()))
        // What it logs (the sample's shutdown notices each round) is shown only if it fails to start.
        log = FileManager.default.temporaryDirectory.appending(path: "aif-bench-app-\(getpid())-\(port).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw BenchSetupError(description: "cannot create the app's log file \(log.path)")
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        do {
            try BenchServer.waitForPort(port)
        } catch {
            stop()
            throw BenchSetupError(description: "\(app.title) did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: log)
    }

    /// The process's CPU time so far (user + system, every thread), from /proc.
    func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
        // The fields after the command's name in parentheses: state is field 3, utime 14, stime 15.
        guard let close = stat.lastIndex(of: ")") else { throw BenchSetupError(description: "unreadable /proc stat: \(stat)") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchSetupError(description: "unreadable /proc stat: \(stat)")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// SIGTERM (a graceful shutdown), then SIGKILL if it has not ended within ten seconds.
    func stop() {
        kill(process.processIdentifier, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
