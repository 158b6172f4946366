import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Large transfers side by side: a 256 MiB file downloaded from nginx to a file by this library,
/// the curl CLI, the C libcurl loop, AsyncHTTPClient's file download delegate and URLSession's
/// download task; and uploaded as a multipart file by this library and `curl -F` to a sink that
/// drops what it gets. Each client in a process of its own (pinned to CPU 1, the servers to
/// CPU 0), rounds interleaved, medians reported.
struct TransferComparison {
    var rounds: Int
    var fileBytes = 256 << 20

    func run(server: BenchServer, pinned: Bool) throws {
        // On tmpfs when there is one: the clients are measured, not the disk (this library
        // flushes a download to disk before moving it into place, which the others do not; on
        // the benchmark VM's disk that alone costs a quarter of the throughput).
        let memoryBacked = FileManager.default.fileExists(atPath: "/dev/shm")
        let directory = (memoryBacked ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory).appending(path: "aif-bench-transfers-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let downloadURL = try server.serveLargeFile(bytes: fileBytes) else {
            say("\nTRANSFERS skipped: they need nginx to serve the file")
            return
        }
        let source = directory.appending(path: "upload.bin").path
        try shell("head -c \(fileBytes) /dev/urandom > '\(source)'")
        let sinkPort = try BenchServer.freePort()
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let sink = Process()
        sink.executableURL = URL(fileURLWithPath: pinned ? "/usr/bin/taskset" : executable)
        sink.arguments = (pinned ? ["-c", "0", executable] : []) + ["sink", "--port", "\(sinkPort)"]
        try sink.run()
        defer {
            // SIGKILL: a child started from a Dispatch thread may have SIGTERM blocked.
            kill(sink.processIdentifier, SIGKILL)
            sink.waitUntilExit()
        }
        try BenchServer.waitForPort(sinkPort)
        let uploadURL = "http://127.0.0.1:\(sinkPort)/upload"
        let output = directory.appending(path: "download.bin").path
        let pin = pinned ? "/usr/bin/taskset -c 1 " : ""
        say("\nTransfers: \(fileBytes >> 20) MiB, \(rounds) rounds; download from \(server.description.split(separator: ",").first ?? "nginx") to "
            + "\(memoryBacked ? "tmpfs" : "the temporary folder"), upload from there to a sink that drops the bytes")

        var download: [String: [TransferMeasurement]] = [:]
        var upload: [String: [TransferMeasurement]] = [:]
        let downloaders: [(String, String)] = [
            ("transport", "'\(executable)' transfer-client transport-download"),
            ("curl-cli", ""),
            ("libcurl-c", "'\(executable)' transfer-client libcurl-c-download"),
            ("ahc", "'\(executable)' transfer-client ahc-download"),
            ("urlsession", "'\(executable)' transfer-client urlsession-download"),
            ("openapi-curl", "'\(executable)' transfer-client openapi-curl-download"),
            ("openapi-ahc", "'\(executable)' transfer-client openapi-ahc-download"),
        ]
        for round in 0..<rounds {
            for index in downloaders.indices {
                let (name, command) = downloaders[(index + round) % downloaders.count]
                try? FileManager.default.removeItem(atPath: output)
                let measurement = name == "curl-cli"
                    ? try curl("\(pin)curl -s --noproxy '*' -o '\(output)' -w '%{time_total} %{size_download}' '\(downloadURL)'")
                    : try client("\(pin)\(command) --url '\(downloadURL)' --warm '\(server.httpURL)' --path '\(output)'")
                download[name, default: []].append(measurement)
            }
            for (name, command) in [("transport", "'\(executable)' transfer-client transport-upload"), ("curl-cli", "")].shuffled() {
                let measurement = name == "curl-cli"
                    ? try curl("\(pin)curl -s --noproxy '*' -o /dev/null -w '%{time_total} %{size_upload}' -F 'file=@\(source)' '\(uploadURL)'")
                    : try client("\(pin)\(command) --url '\(uploadURL)' --warm '\(server.httpURL)' --path '\(source)'")
                upload[name, default: []].append(measurement)
            }
            say("transfer round \(round + 1)/\(rounds) done")
        }

        say("")
        say("== download, \(fileBytes >> 20) MiB to a file")
        say("client          MiB/s   rss growth MiB   ×curl-cli")
        report(download, order: downloaders.map(\.0))
        say("== upload, \(fileBytes >> 20) MiB as multipart/form-data")
        say("client          MiB/s   rss growth MiB   ×curl-cli")
        report(upload, order: ["transport", "curl-cli"])
        say("")
        say("RATIO download " + ["curl-cli", "ahc", "urlsession"].compactMap { ratio("transport", $0, download) }.joined(separator: " ")
            + " rss-growth-mib=" + growth(download["transport"]))
        say("RATIO openapi-download " + ["curl-cli", "openapi-ahc"].compactMap { ratio("openapi-curl", $0, download) }.joined(separator: " ")
            + " rss-growth-mib=" + growth(download["openapi-curl"]))
        say("RATIO upload " + (ratio("transport", "curl-cli", upload) ?? "") + " rss-growth-mib=" + growth(upload["transport"]))
    }

    private func report(_ results: [String: [TransferMeasurement]], order: [String]) {
        let reference = results["curl-cli"].map { median($0.map(\.mebibytesPerSecond)) }
        for name in order {
            guard let runs = results[name] else { continue }
            let speed = median(runs.map(\.mebibytesPerSecond))
            let memory = name == "curl-cli" ? "-" : String(format: "%.1f", median(runs.map { Double($0.residentGrowthKiB) / 1024 }))
            say(name.padding(toLength: 14, withPad: " ", startingAt: 0) + String(format: "%7.0f", speed)
                + memory.leftPadded(to: 17) + (reference.map { String(format: "%12.2f", speed / $0) } ?? ""))
        }
    }

    /// `transport/curl-cli=0.97`: the median over rounds of that round's ratio of throughput.
    private func ratio(_ top: String, _ bottom: String, _ results: [String: [TransferMeasurement]]) -> String? {
        guard let a = results[top], let b = results[bottom], a.count == b.count else { return nil }
        return "\(top)/\(bottom)=" + String(format: "%.2f", median(zip(a, b).map { $0.mebibytesPerSecond / $1.mebibytesPerSecond }))
    }

    private func growth(_ runs: [TransferMeasurement]?) -> String {
        String(format: "%.1f", median((runs ?? []).map { Double($0.residentGrowthKiB) / 1024 }))
    }

    private func client(_ command: String) throws -> TransferMeasurement {
        let output = try shell(command)
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("TRANSFER ") }), let measurement = TransferMeasurement(line: String(line)) else {
            throw BenchSetupError(description: "\(command) failed: \(output)")
        }
        return measurement
    }

    /// The curl CLI's own transfer time (`-w %{time_total}`), without its start-up.
    private func curl(_ command: String) throws -> TransferMeasurement {
        let words = try shell(command).split(separator: " ")
        guard words.count == 2, let seconds = Double(words[0]), let bytes = Double(words[1]), seconds > 0 else {
            throw BenchSetupError(description: "\(command) printed nothing usable")
        }
        return TransferMeasurement(seconds: seconds, bytes: Int64(bytes), residentGrowthKiB: 0)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
