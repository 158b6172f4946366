import BenchSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The side-by-side comparison: one server, every client in its own process, interleaved over
/// several rounds; medians per client and medians of per-round ratios.
struct Comparison {
    struct Scenario: Sendable {
        var concurrency: Int
        var secure: Bool
        /// Whether every request POSTs a small JSON order (HTTP/1.1) instead of a GET.
        var post = false
        var label: String {
            if post { return "c=\(concurrency) POST HTTP/1.1" }
            return secure ? "c=\(concurrency) HTTPS (HTTP/2 where the client supports it)" : "c=\(concurrency) HTTP/1.1"
        }
        var ratioLabel: String { post ? "c=\(concurrency)-post" : secure ? "c=\(concurrency)-https" : "c=\(concurrency)" }
    }

    var rounds: Int
    var seconds: Double
    var warmup: Double
    var clients: [ClientKind]
    /// Rounds of the large-transfer comparison that follows (0 skips it).
    var transferRounds = 3
    /// Rounds of the scale comparison (many idle transfers in flight) that follows (0 skips it).
    var scaleRounds = 3
    /// The server sample's executable, for the server comparison (run.sh builds it; `nil`
    /// skips that comparison).
    var serverSample: String?
    /// Rounds of the server comparison (0 skips it).
    var serverRounds = 3
    /// Runs the large-transfer comparison alone.
    var transfersOnly = false

    func run() async throws {
        let server = try BenchServer.start()
        defer { server.stop() }
        let pin = canPin
        say("Server: \(server.description); \(pin ? "server pinned to CPU 0, clients to CPU 1" : "no CPU pinning")")
        if transfersOnly {
            return try TransferComparison(rounds: max(1, transferRounds)).run(server: server, pinned: pin)
        }
        say("Rounds: \(rounds) × \(seconds) s per client (after \(warmup) s warm-up), clients interleaved; medians reported.\n")

        var scenarios = [1, 16, 64].map { Scenario(concurrency: $0, secure: false) }
        if server.httpsURL != nil { scenarios.append(Scenario(concurrency: 16, secure: true)) }
        scenarios.append(Scenario(concurrency: 16, secure: false, post: true))

        // results[scenario][client] = one measurement per round
        var results: [Int: [ClientKind: [Measurement]]] = [:]
        for round in 0..<rounds {
            for (index, scenario) in scenarios.enumerated() {
                let order = clients.indices.map { clients[($0 + round) % clients.count] }
                // FoundationNetworking on Linux offers no way to trust a custom CA (its
                // URLSessionCertificateAuthorityInfoFile switch exists only in debug builds), so
                // it cannot take part over HTTPS without changing the machine's trust store.
                for kind in order where !(scenario.secure && kind == .urlSession) && kind.runs(in: scenario) {
                    let measurement = try runClient(kind, scenario: scenario, server: server, pinned: pin)
                    results[index, default: [:]][kind, default: []].append(measurement)
                    if measurement.failures > 0 {
                        say("  warning: \(kind.rawValue) \(scenario.label): \(measurement.failures) failed requests")
                    }
                }
            }
            say("round \(round + 1)/\(rounds) done")
        }
        say("")
        var ratioLines: [String] = []
        for (index, scenario) in scenarios.enumerated() {
            let byClient = results[index] ?? [:]
            say("== \(scenario.label)")
            say("client".padding(toLength: 21, withPad: " ", startingAt: 0) + "    req/s   CPU µs/req   peak MiB   ×libcurl-c")
            let reference = byClient[.libcurlC].map { median($0.map(\.requestsPerSecond)) }
            for kind in clients {
                guard let runs = byClient[kind] else { continue }
                let rps = median(runs.map(\.requestsPerSecond))
                let cpu = median(runs.map(\.cpuMicrosecondsPerRequest))
                let memory = median(runs.map { Double($0.peakMemoryKiB) / 1024 })
                let ratio = reference.map { String(format: "%.2f", rps / $0) } ?? "-"
                say(kind.rawValue.padding(toLength: 21, withPad: " ", startingAt: 0)
                    + String(format: "%9.0f %12.1f %10.1f", rps, cpu, memory) + "   " + ratio)
            }
            if scenario.secure && clients.contains(.urlSession) {
                say("urlsession: not measured over HTTPS (FoundationNetworking cannot trust the benchmark's own CA)")
            }
            say("")
            // The host's pace, for the history: the ratios compare runs across hosts, this says
            // how fast the host was.
            if let reference { ratioLines.append("HOST \(scenario.ratioLabel) libcurl-c-req/s=" + String(format: "%.0f", reference)) }
            ratioLines.append(ratioLine(scenario, byClient))
            if let line = managerRatioLine(scenario, byClient) { ratioLines.append(line) }
            if let line = openAPIRatioLine(scenario, byClient) { ratioLines.append(line) }
        }
        for line in ratioLines { say(line) }
        try soak(server: server, pinned: pin)
        if transferRounds > 0 { try TransferComparison(rounds: transferRounds).run(server: server, pinned: pin) }
        if scaleRounds > 0 { try ScaleComparison(rounds: scaleRounds).run(pinned: pin) }
        if let serverSample, serverRounds > 0 {
            try ServerComparison(samplePath: serverSample, rounds: serverRounds).run(backend: try server.serveGoods(count: 16), pinned: pin)
        } else if serverRounds > 0 {
            say("\nServer: skipped (no --server-sample; run.sh builds the sample and passes it)")
        }
        say("")
        try DiskCacheBench().run()
        try ConfigBench().run()
    }

    /// `RATIO c=16 transport/libcurl-c=0.91 …`: each figure the median over rounds of that
    /// round's ratio of requests per second.
    private func ratioLine(_ scenario: Scenario, _ byClient: [ClientKind: [Measurement]]) -> String {
        let parts = [
            ratio(.transport, .libcurlC, byClient), ratio(.transportAsync, .libcurlC, byClient), ratio(.transport, .ahc, byClient),
            ratio(.transport, .urlSession, byClient), ratio(.transportAsyncOnLoop, .libcurlC, byClient),
        ].compactMap { $0 }
        return "RATIO \(scenario.ratioLabel) " + parts.joined(separator: " ")
    }

    /// `RATIO c=16 manager/libcurl-c=0.62 manager/ahc=2.1 …`: the full manager stack (signed,
    /// decoded, delivered) against the C loop and AsyncHTTPClient's bare request.
    private func managerRatioLine(_ scenario: Scenario, _ byClient: [ClientKind: [Measurement]]) -> String? {
        let parts = [
            ratio(.manager, .libcurlC, byClient), ratio(.manager, .ahc, byClient),
            ratio(.managerAsync, .libcurlC, byClient), ratio(.managerAsync, .ahc, byClient), ratio(.managerHandOff, .libcurlC, byClient),
            ratio(.managerHandOff, .ahc, byClient), ratio(.manager, .transport, byClient), ratio(.managerObserved, .manager, byClient),
            ratio(.interfaceAsync, .managerAsync, byClient),
        ].compactMap { $0 }
        return parts.isEmpty ? nil : "RATIO \(scenario.ratioLabel) " + parts.joined(separator: " ")
    }

    /// `RATIO openapi c=16 curl-transport/ahc-transport=2.1 …`: one generated client on the three
    /// transports, loading and decoding the same document.
    private func openAPIRatioLine(_ scenario: Scenario, _ byClient: [ClientKind: [Measurement]]) -> String? {
        let parts = [
            ratio(.openAPICurl, .openAPIAHC, byClient, as: "curl-transport/ahc-transport"),
            ratio(.openAPICurl, .openAPIURLSession, byClient, as: "curl-transport/urlsession-transport"),
            ratio(.openAPICurl, .transportAsync, byClient, as: "curl-transport/transport-async"),
            ratio(.openAPIStub, .openAPICurl, byClient, as: "stub-transport/curl-transport"),
        ].compactMap { $0 }
        return parts.isEmpty ? nil : "RATIO openapi \(scenario.ratioLabel) " + parts.joined(separator: " ")
    }

    /// Resident memory of the manager stack over 100,000 loads, through each face, each in a
    /// process of its own.
    private func soak(server: BenchServer, pinned: Bool) throws {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        say("")
        for (face, client) in [("delegate", "manager"), ("async", "manager-async")] {
            let command = (pinned ? "/usr/bin/taskset -c 1 " : "") + "'\(executable)' soak --url '\(server.httpURL)' --loads 100000 --concurrency 16 --face \(face)"
            let output = try shell(command).trimmingCharacters(in: .whitespacesAndNewlines)
            let samples = output.split(separator: " ").map { $0.split(separator: ":") }.compactMap { pair -> String? in
                guard pair.count == 2, let loads = Int(pair[0]), let kib = Int(pair[1]) else { return nil }
                return "\(loads / 1000)k: \(String(format: "%.1f", Double(kib) / 1024)) MiB"
            }
            say("MEMORY \(client), 100,000 loads at c=16, resident after each 20,000: " + samples.joined(separator: ", "))
        }
    }

    /// `a/b=0.91`: the median over rounds of that round's ratio of requests per second.
    private func ratio(_ numerator: ClientKind, _ denominator: ClientKind, _ byClient: [ClientKind: [Measurement]], as label: String? = nil) -> String? {
        guard let top = byClient[numerator], let bottom = byClient[denominator], top.count == bottom.count else { return nil }
        let value = median(zip(top, bottom).map { $0.requestsPerSecond / $1.requestsPerSecond })
        return (label ?? "\(numerator.rawValue)/\(denominator.rawValue)") + "=" + (value >= 10 ? String(format: "%.0f", value) : String(format: "%.2f", value))
    }

    private func runClient(_ kind: ClientKind, scenario: Scenario, server: BenchServer, pinned: Bool) throws -> Measurement {
        var arguments = [
            "client", kind.rawValue,
            "--url", scenario.post ? server.orderURL : scenario.secure ? server.httpsURL! : server.httpURL,
            "--concurrency", "\(scenario.concurrency)",
            "--seconds", "\(seconds)", "--warmup", "\(warmup)",
        ]
        if scenario.secure {
            arguments += ["--ca", server.caFile!, "--http2"]
        }
        if scenario.post { arguments.append("--post") }
        // FoundationNetworking's URLSession reads its CA bundle from this variable.
        let environment = server.caFile.map { ["URLSessionCertificateAuthorityInfoFile": $0] } ?? [:]
        return try runClientProcess(arguments, pinned: pinned, environment: environment, describing: "\(kind.rawValue) at \(scenario.label)")
    }
}

/// Runs this executable as a client process (`TransportBench client …`, pinned to CPU 1 when
/// `pinned`, with no proxy), and returns the measurement it printed; throws with its output,
/// naming the run as `description` says, when it failed.
func runClientProcess(_ arguments: [String], pinned: Bool, environment extra: [String: String] = [:], describing description: String) throws -> Measurement {
    let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pinned ? "/usr/bin/taskset" : executable)
    process.arguments = (pinned ? ["-c", "1", executable] : []) + arguments
    var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
    environment["http_proxy"] = nil
    environment["https_proxy"] = nil
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0, let line = text.split(separator: "\n").last(where: { $0.hasPrefix("RESULT ") }),
        let measurement = Measurement(line: String(line))
    else {
        throw BenchSetupError(description: "\(description) failed (exit \(process.terminationStatus)): \(text)")
    }
    return measurement
}

/// The server the clients share: nginx (one worker) when installed, the SwiftNIO fallback
/// otherwise. Runs as a child process, pinned to CPU 0 when there are two.
final class BenchServer {
    let httpURL: String
    let httpsURL: String?
    let caFile: String?
    let description: String
    private let process: Process
    private let directory: URL

    /// Where the POST scenario sends its orders: answered with the small JSON, the body read
    /// and dropped (nginx's `return`; the fallback server answers every request alike).
    var orderURL: String {
        httpURL.replacingOccurrences(of: "/small.json", with: "/orders")
    }

    /// Puts a file of `bytes` random bytes where nginx serves it; returns its URL, or `nil` with
    /// the fallback server (which serves the JSON document only).
    func serveLargeFile(bytes: Int) throws -> String? {
        guard httpsURL != nil else { return nil }
        let path = directory.appending(path: "www/big.bin").path
        try shell("head -c \(bytes) /dev/urandom > '\(path)' && chmod a+r '\(path)'")
        return httpURL.replacingOccurrences(of: "/small.json", with: "/big.bin")
    }

    /// Puts the server sample's articles 1 to `count` where nginx serves them
    /// (`/v1/goods/{id}`, `{"id":1,"title":"Article 1","price_cents":250}`); returns the base URL
    /// a backend is given, or `nil` with the fallback server.
    func serveGoods(count: Int) throws -> String? {
        guard httpsURL != nil else { return nil }
        let folder = directory.appending(path: "www/v1/goods")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for id in 1...count {
            try #"{"id":\#(id),"title":"Article \#(id)","price_cents":\#(id * 250)}"#.write(
                to: folder.appending(path: "\(id)"), atomically: true, encoding: .utf8)
        }
        _ = try shell("chmod -R a+rX '\(directory.path)/www'")
        return httpURL.replacingOccurrences(of: "/small.json", with: "")
    }

    private init(httpURL: String, httpsURL: String?, caFile: String?, description: String, process: Process, directory: URL) {
        self.httpURL = httpURL
        self.httpsURL = httpsURL
        self.caFile = caFile
        self.description = description
        self.process = process
        self.directory = directory
    }

    static func start() throws -> BenchServer {
        let directory = FileManager.default.temporaryDirectory.appending(path: "aif-bench-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory.appending(path: "www"), withIntermediateDirectories: true)
        try BenchPayload.json.write(to: directory.appending(path: "www/small.json"), atomically: true, encoding: .utf8)
        _ = try shell("chmod -R a+rX '\(directory.path)'")
        let pin = canPin
        let httpPort = try freePort()

        if let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile(atPath:)) {
            let httpsPort = try freePort()
            let dir = directory.path
            _ = try shell("""
                set -e; cd '\(dir)'
                openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 \
                  -subj '/CN=AIF bench CA' -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign' 2>/dev/null
                openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr -subj '/CN=localhost' 2>/dev/null
                printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > server.ext
                openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext 2>/dev/null
                chmod a+r server.key ca.pem server.pem
                """)
            let configuration = """
                worker_processes 1;
                daemon off;
                pid \(dir)/nginx.pid;
                error_log \(dir)/error.log warn;
                events { worker_connections 8192; }
                http {
                    access_log off;
                    keepalive_requests 100000000;
                    keepalive_timeout 300s;
                    types { application/json json; application/octet-stream bin; }
                    default_type application/json;
                    server {
                        listen 127.0.0.1:\(httpPort);
                        root \(dir)/www;
                        location = /orders { return 200 '\(BenchPayload.json.trimmingCharacters(in: .newlines))'; }
                    }
                    server {
                        listen 127.0.0.1:\(httpsPort) ssl http2;
                        ssl_certificate \(dir)/server.pem;
                        ssl_certificate_key \(dir)/server.key;
                        root \(dir)/www;
                    }
                }
                """
            try configuration.write(to: directory.appending(path: "nginx.conf"), atomically: true, encoding: .utf8)
            let process = try launch(pin ? ["/usr/bin/taskset", "-c", "0", nginx] : [nginx], ["-p", dir, "-c", "\(dir)/nginx.conf"])
            try waitForPort(httpPort)
            try waitForPort(httpsPort)
            return BenchServer(
                httpURL: "http://127.0.0.1:\(httpPort)/small.json",
                httpsURL: "https://127.0.0.1:\(httpsPort)/small.json",
                caFile: "\(dir)/ca.pem",
                description: "nginx, 1 worker, \(BenchPayload.json.utf8.count)-byte JSON",
                process: process,
                directory: directory
            )
        }

        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let process = try launch(pin ? ["/usr/bin/taskset", "-c", "0", executable] : [executable], ["serve", "--port", "\(httpPort)"])
        try waitForPort(httpPort)
        return BenchServer(
            httpURL: "http://127.0.0.1:\(httpPort)/small.json",
            httpsURL: nil,
            caFile: nil,
            description: "embedded SwiftNIO server (nginx not installed; HTTPS scenario skipped), \(BenchPayload.json.utf8.count)-byte JSON",
            process: process,
            directory: directory
        )
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func launch(_ command: [String], _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + arguments
        try process.run()
        return process
    }

    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard ok else { throw BenchSetupError(description: "could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func waitForPort(_ port: Int) throws {
        for _ in 0..<100 {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(socket)
            if connected { return }
            usleep(50_000)
        }
        throw BenchSetupError(description: "the benchmark server did not start listening on port \(port)")
    }
}

/// Whether servers and clients can each have a CPU of their own (`taskset`, two or more CPUs).
var canPin: Bool {
    ProcessInfo.processInfo.activeProcessorCount >= 2 && FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset")
}

@discardableResult
func shell(_ command: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", command]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else { throw BenchSetupError(description: "`\(command)` failed: \(text)") }
    return text
}

/// Prints a line and flushes at once, so progress shows even when the output is a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}
