import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Many transfers in flight, most of them idle: every client keeps N requests outstanding
/// against ``DelayServer`` (each answer comes a second after its request) at N = 16, 256, 1,024
/// and 4,096, pinned to one CPU, and the figure is client CPU time per completed request. A loop
/// whose every wake-up costs in proportion to the transfers waiting shows it here.
struct ScaleComparison {
    var rounds: Int
    var concurrencies = [16, 256, 1024, 4096]
    var clients: [ClientKind] = [.libcurlC, .transport, .ahc]
    var delayMilliseconds = 1000
    /// Long enough for every connection to open and answer once before the measured run.
    var warmup = 2.5
    var seconds = 5.0
    /// In a last pass at the highest concurrency, every this many request chains carry a total
    /// timeout of ``shortTimeoutMilliseconds``, half the server's delay: how late those timeouts
    /// end is the `TIMEOUTS` line.
    var timeoutEvery = 8
    var shortTimeoutMilliseconds = 500

    func run(pinned: Bool) throws {
        let port = try BenchServer.freePort()
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let server = Process()
        server.executableURL = URL(fileURLWithPath: pinned ? "/usr/bin/taskset" : executable)
        server.arguments = (pinned ? ["-c", "0", executable] : []) + ["delay-serve", "--port", "\(port)", "--delay-ms", "\(delayMilliseconds)"]
        try server.run()
        defer {
            // SIGKILL: a child started from a Dispatch thread may have SIGTERM blocked.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        try BenchServer.waitForPort(port)
        let url = "http://127.0.0.1:\(port)/small.json"
        say("\nScale: every answer \(delayMilliseconds) ms after its request (SwiftNIO server\(pinned ? ", CPU 0" : "")); "
            + "\(rounds) rounds × \(seconds) s per client after \(warmup) s warm-up; CPU µs per completed request, medians")

        // cpu[concurrency][client] = one figure per round
        var cpu: [Int: [ClientKind: [Double]]] = [:]
        var lateness: [ClientKind: [TimeoutLateness.Summary]] = [:]
        let top = concurrencies.max() ?? 16
        for round in 0..<rounds {
            let order = clients.indices.map { clients[($0 + round) % clients.count] }
            for concurrency in concurrencies {
                for kind in order {
                    let measurement = try runClient(kind, url: url, concurrency: concurrency, pinned: pinned)
                    if measurement.failures > 0 {
                        say("  warning: \(kind.rawValue) c=\(concurrency): \(measurement.failures) failed requests")
                    }
                    cpu[concurrency, default: [:]][kind, default: []].append(measurement.cpuMicrosecondsPerRequest)
                }
            }
            for kind in order {
                let measurement = try runClient(kind, url: url, concurrency: top, pinned: pinned, timingOut: true)
                if measurement.failures > 0 {
                    say("  warning: \(kind.rawValue) c=\(top) with timeouts: \(measurement.failures) failed requests")
                }
                lateness[kind, default: []].append(measurement.lateness)
            }
            say("scale round \(round + 1)/\(rounds) done")
        }
        say("in flight".padding(toLength: 12, withPad: " ", startingAt: 0)
            + clients.map { $0.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0) }.joined())
        for concurrency in concurrencies {
            say("\(concurrency)".padding(toLength: 12, withPad: " ", startingAt: 0)
                + clients.map { String(format: "%-14.1f", median(cpu[concurrency]?[$0] ?? [])) }.joined())
        }
        func series(_ kind: ClientKind) -> String {
            concurrencies.map { "c\($0):" + String(format: "%.1f", median(cpu[$0]?[kind] ?? [])) }.joined(separator: ",")
        }
        say("SCALE idle-delay=\(delayMilliseconds / 1000)s transport-us=\(series(.transport)) libcurl-c-us=\(series(.libcurlC)) ahc-us=\(series(.ahc))")
        // Over rounds: the medians of each round's p50 and p99, the largest max, every timeout.
        say("TIMEOUTS scale c=\(top) total=\(shortTimeoutMilliseconds)ms delay=\(delayMilliseconds)ms every=\(timeoutEvery) "
            + clients.map { kind in
                let runs = lateness[kind] ?? []
                return "\(kind.rawValue) late-ms p50=" + String(format: "%.0f", median(runs.map(\.p50)))
                    + " p99=" + String(format: "%.0f", median(runs.map(\.p99)))
                    + " max=" + String(format: "%.0f", runs.map(\.max).max() ?? .nan)
                    + " count=\(runs.map(\.count).reduce(0, +))"
            }.joined(separator: "; "))
        if let transport = cpu[top]?[.transport], let ahc = cpu[top]?[.ahc] {
            let versusAHC = median(zip(transport, ahc).map { $0 / $1 })
            var line = "RATIO scale c=\(top) transport/ahc-cpu=" + String(format: "%.2f", versusAHC)
            if concurrencies.contains(256), let base = cpu[256]?[.transport] {
                line += " transport-c\(top)/c256-cpu=" + String(format: "%.2f", median(zip(transport, base).map { $0 / $1 }))
            }
            say(line)
        }
    }

    private func runClient(_ kind: ClientKind, url: String, concurrency: Int, pinned: Bool, timingOut: Bool = false) throws -> Measurement {
        let timeouts = timingOut ? ["--timeout-every", "\(timeoutEvery)", "--short-timeout-ms", "\(shortTimeoutMilliseconds)"] : []
        return try runClientProcess(
            ["client", kind.rawValue, "--url", url, "--concurrency", "\(concurrency)", "--seconds", "\(seconds)", "--warmup", "\(warmup)"] + timeouts,
            pinned: pinned, describing: "\(kind.rawValue) at c=\(concurrency)\(timingOut ? " with timeouts" : "") against the delayed server")
    }
}
