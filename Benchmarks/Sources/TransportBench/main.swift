@_spi(Performance) import AIFNetworking
// The opt-in to libcurl buffer recycling is the transport's.
@_spi(Performance) import AIFTransport
import Foundation

// TransportBench: `compare` runs the whole side-by-side comparison (what `make bench` runs);
// `client` runs one client once and prints its figures (the comparison starts one process per
// client so that CPU time and peak memory are each client's own); `serve` is the fallback server;
// `server` compares the server sample with its AsyncHTTPClient twin (`server-twin`) under load.

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let arguments = Array(CommandLine.arguments.dropFirst())
// The library's opt-in for libcurl's transfer buffers (see Benchmarks/README.md), unless the run
// measures without it.
if ProcessInfo.processInfo.environment["AIF_BENCH_PLAIN_MALLOC"] == nil {
    CurlTransport.recycleLibcurlTransferBuffers()
}
switch arguments.first {
case "client":
    raiseDescriptorLimit()
    guard arguments.count > 1, let kind = ClientKind(rawValue: arguments[1]), let url = option("--url", in: arguments) else {
        print("usage: TransportBench client \(ClientKind.allCases.map(\.rawValue).joined(separator: "|")) --url URL [--concurrency N] [--seconds S] [--warmup S] [--ca FILE] [--http2] [--timeout-every N] [--short-timeout-ms M] [--post]")
        exit(2)
    }
    var settings = ClientSettings(
        url: url,
        caFile: option("--ca", in: arguments),
        concurrency: option("--concurrency", in: arguments).flatMap(Int.init) ?? 16,
        http2: arguments.contains("--http2")
    )
    settings.timeoutEvery = option("--timeout-every", in: arguments).flatMap(Int.init) ?? 0
    settings.shortTimeoutMilliseconds = option("--short-timeout-ms", in: arguments).flatMap(Int.init) ?? 500
    settings.post = arguments.contains("--post")
    let measurement = try await measure(
        kind, settings,
        warmup: option("--warmup", in: arguments).flatMap(Double.init) ?? 0.5,
        seconds: option("--seconds", in: arguments).flatMap(Double.init) ?? 2
    )
    print(measurement.line)
case "soak":
    guard let url = option("--url", in: arguments) else {
        print("usage: TransportBench soak --url URL [--loads N] [--concurrency N] [--face async|delegate]")
        exit(2)
    }
    let loads = option("--loads", in: arguments).flatMap(Int.init) ?? 100_000
    let concurrency = option("--concurrency", in: arguments).flatMap(Int.init) ?? 16
    let samples = option("--face", in: arguments) == "delegate"
        ? await soakManagerDelegate(url: url, loads: loads, concurrency: concurrency)
        : await soakManager(url: url, loads: loads, concurrency: concurrency)
    print(samples.map { "\($0.loads):\($0.residentKiB)" }.joined(separator: " "))
case "delay-serve":
    try DelayServer.run(
        port: option("--port", in: arguments).flatMap(Int.init) ?? 8080,
        delayMilliseconds: option("--delay-ms", in: arguments).flatMap(Int.init) ?? 1000)
case "scale":
    try ScaleComparison(rounds: option("--rounds", in: arguments).flatMap(Int.init) ?? 3).run(pinned: canPin)
case "serve":
    try FallbackServer.run(port: option("--port", in: arguments).flatMap(Int.init) ?? 8080)
case "sink":
    try UploadSink.run(port: option("--port", in: arguments).flatMap(Int.init) ?? 8081)
case "transfer-client":
    guard arguments.count > 1, let kind = TransferClientKind(rawValue: arguments[1]), let url = option("--url", in: arguments),
        let warm = option("--warm", in: arguments), let path = option("--path", in: arguments)
    else {
        print("usage: TransportBench transfer-client \(TransferClientKind.allCases.map(\.rawValue).joined(separator: "|")) --url URL --warm URL --path FILE")
        exit(2)
    }
    print(try await measureTransfer(kind, url: url, warmURL: warm, path: path).line)
case "server":
    guard let sample = option("--sample", in: arguments) else {
        print("usage: TransportBench server --sample PATH [--rounds N] [--seconds S]")
        exit(2)
    }
    let server = try BenchServer.start()
    defer { server.stop() }
    var comparison = ServerComparison(samplePath: sample, rounds: option("--rounds", in: arguments).flatMap(Int.init) ?? 3)
    comparison.seconds = option("--seconds", in: arguments).flatMap(Double.init) ?? comparison.seconds
    try comparison.run(backend: try server.serveGoods(count: 16), pinned: canPin)
case "server-twin":
    guard let backend = option("--backend", in: arguments), let port = option("--port", in: arguments).flatMap(Int.init) else {
        print("usage: TransportBench server-twin --backend URL --port P")
        exit(2)
    }
    try await ServerTwin.run(backend: backend, port: port)
case "cache":
    try DiskCacheBench().run()
case "config":
    try ConfigBench().run()
case "history":
    // `history append LOG [--commit C] [--date D]`: the run's row; `history draw`: the picture.
    let directory = URL(fileURLWithPath: option("--directory", in: arguments) ?? "history")
    let history = History(file: directory.appendingPathComponent("runs.jsonl"))
    switch arguments.dropFirst().first {
    case "append":
        guard arguments.count > 2 else {
            print("usage: TransportBench history append LOG [--commit C] [--date YYYY-MM-DD] [--arguments A] [--directory DIR]")
            exit(2)
        }
        let output = try String(contentsOfFile: arguments[2], encoding: .utf8)
        let today = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate])
        let row = History.row(fromOutput: output, date: option("--date", in: arguments) ?? today, commit: option("--commit", in: arguments) ?? "unknown",
            arguments: option("--arguments", in: arguments) ?? "")
        guard row.ratios != nil || row.counts != nil else {
            print("TransportBench history: \(arguments[2]) has no RATIO or COUNTS line; nothing appended")
            exit(1)
        }
        try history.append(row)
        print("history: appended the run of \(row.commit ?? "?") to \(history.file.path)")
    case "draw":
        let picture = History.picture(of: try history.runs())
        try picture.write(to: directory.appendingPathComponent("ratios.svg"), atomically: true, encoding: .utf8)
        print("history: drew \(directory.appendingPathComponent("ratios.svg").path)")
    default:
        print("usage: TransportBench history append LOG [--commit C] [--date D] | history draw [--directory DIR]")
        exit(2)
    }
case "compare", nil:
    let only = option("--clients", in: arguments).map { $0.split(separator: ",").compactMap { ClientKind(rawValue: String($0)) } }
    let comparison = Comparison(
        rounds: option("--rounds", in: arguments).flatMap(Int.init) ?? 6,
        seconds: option("--seconds", in: arguments).flatMap(Double.init) ?? 1.5,
        warmup: option("--warmup", in: arguments).flatMap(Double.init) ?? 0.3,
        clients: only ?? ClientKind.allCases,
        transferRounds: option("--transfer-rounds", in: arguments).flatMap(Int.init) ?? 3,
        scaleRounds: option("--scale-rounds", in: arguments).flatMap(Int.init) ?? 3,
        serverSample: option("--server-sample", in: arguments),
        serverRounds: option("--server-rounds", in: arguments).flatMap(Int.init) ?? 3,
        transfersOnly: arguments.contains("--transfers-only")
    )
    try await comparison.run()
default:
    print("usage: TransportBench [compare [--rounds N] [--seconds S] [--clients a,b] [--transfer-rounds N] [--scale-rounds N] [--server-sample PATH] [--server-rounds N] [--transfers-only]] | scale [--rounds N] | server --sample PATH [--rounds N] | server-twin --backend URL --port P | cache | config | client … | transfer-client … | serve --port P | soak --url URL [--face async|delegate] | delay-serve --port P [--delay-ms D] | sink --port P | history append LOG | history draw")
    exit(2)
}
