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
        for round in 0..<rounds {
            for concurrency in concurrencies {
                let order = clients.indices.map { clients[($0 + round) % clients.count] }
                for kind in order {
                    let measurement = try runClient(kind, url: url, concurrency: concurrency, pinned: pinned)
                    if measurement.failures > 0 {
                        say("  warning: \(kind.rawValue) c=\(concurrency): \(measurement.failures) failed requests")
                    }
                    cpu[concurrency, default: [:]][kind, default: []].append(measurement.cpuMicrosecondsPerRequest)
                }
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
        if let top = concurrencies.last, let transport = cpu[top]?[.transport], let ahc = cpu[top]?[.ahc] {
            let versusAHC = median(zip(transport, ahc).map { $0 / $1 })
            var line = "RATIO scale c=\(top) transport/ahc-cpu=" + String(format: "%.2f", versusAHC)
            if concurrencies.contains(256), let base = cpu[256]?[.transport] {
                line += " transport-c\(top)/c256-cpu=" + String(format: "%.2f", median(zip(transport, base).map { $0 / $1 }))
            }
            say(line)
        }
    }

    private func runClient(_ kind: ClientKind, url: String, concurrency: Int, pinned: Bool) throws -> Measurement {
        try runClientProcess(
            ["client", kind.rawValue, "--url", url, "--concurrency", "\(concurrency)", "--seconds", "\(seconds)", "--warmup", "\(warmup)"],
            pinned: pinned, describing: "\(kind.rawValue) at c=\(concurrency) against the delayed server")
    }
}
