import AIFNetworking
import AsyncHTTPClient
import CurlLoop
import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The clients of the transfer comparison, each run once in a process of its own: a 256 MiB
/// download to a file, or a multipart upload of a file.
enum TransferClientKind: String, CaseIterable {
    case transportDownload = "transport-download"
    case libcurlCDownload = "libcurl-c-download"
    case ahcDownload = "ahc-download"
    case urlSessionDownload = "urlsession-download"
    /// The generated OpenAPI client on this library's transport, and on AsyncHTTPClient's.
    case openAPICurlDownload = "openapi-curl-download"
    case openAPIAHCDownload = "openapi-ahc-download"
    case transportUpload = "transport-upload"
}

/// What one transfer client measured: its own seconds for the transfer (process start-up not
/// counted), the bytes, and how far its peak resident memory rose during the transfer.
struct TransferMeasurement {
    var seconds: Double
    var bytes: Int64
    var residentGrowthKiB: Int

    var mebibytesPerSecond: Double { Double(bytes) / 1_048_576 / seconds }

    var line: String { "TRANSFER seconds=\(seconds) bytes=\(bytes) rss-growth-kib=\(residentGrowthKiB)" }

    init(seconds: Double, bytes: Int64, residentGrowthKiB: Int) {
        self.seconds = seconds
        self.bytes = bytes
        self.residentGrowthKiB = residentGrowthKiB
    }

    init?(line: String) {
        var fields: [String: String] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let seconds = fields["seconds"].flatMap(Double.init), let bytes = fields["bytes"].flatMap(Int64.init),
            let growth = fields["rss-growth-kib"].flatMap(Int.init)
        else { return nil }
        self.init(seconds: seconds, bytes: bytes, residentGrowthKiB: growth)
    }
}

/// The process's peak resident memory so far, in KiB.
func peakResidentKiB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss
}

/// Runs one transfer client: warms the client up with a small request to `warmURL`, then
/// times the transfer between `url` and the file at `path`.
func measureTransfer(_ kind: TransferClientKind, url: String, warmURL: String, path: String) async throws -> TransferMeasurement {
    let target = URL(string: url)!
    let warm = URL(string: warmURL)!
    func timed(_ body: () async throws -> Int64) async throws -> TransferMeasurement {
        let before = peakResidentKiB()
        let start = ContinuousClock.now
        let bytes = try await body()
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        return TransferMeasurement(seconds: seconds, bytes: bytes, residentGrowthKiB: peakResidentKiB() - before)
    }
    switch kind {
    case .openAPICurlDownload:
        return try await openAPIDownload(.curl, warmURL: warmURL, path: path, timed: timed)
    case .openAPIAHCDownload:
        return try await openAPIDownload(.ahc, warmURL: warmURL, path: path, timed: timed)
    case .transportDownload:
        let transport = CurlTransport(configuration: .init(proxy: .none))
        defer { transport.shutdown() }
        _ = try await transport.send(HTTPRequest(url: warm))
        return try await timed {
            try await transport.download(HTTPRequest(url: target), to: FileDownload(to: URL(fileURLWithPath: path), keepsPartialFile: false)).byteCount
        }
    case .libcurlCDownload:
        _ = aif_bench_curl_download(warmURL, "/dev/null")
        return try await timed {
            let bytes = aif_bench_curl_download(url, path)
            guard bytes >= 0 else { throw BenchSetupError(description: "the C download of \(url) failed") }
            return Int64(bytes)
        }
    case .ahcDownload:
        var configuration = HTTPClient.Configuration()
        configuration.proxy = nil
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        _ = try await client.execute(HTTPClientRequest(url: warmURL), timeout: .seconds(30)).body.collect(upTo: 1 << 20)
        let measurement = try await timed {
            let delegate = try FileDownloadDelegate(path: path)
            let progress = try await client.execute(request: try HTTPClient.Request(url: url), delegate: delegate).futureResult.get()
            return Int64(progress.receivedBytes)
        }
        try await client.shutdown()
        return measurement
    case .urlSessionDownload:
        let configuration = URLSessionConfiguration.ephemeral
        configuration.connectionProxyDictionary = [:]
        let session = URLSession(configuration: configuration)
        _ = try await session.data(from: warm)
        return try await timed {
            let (temporary, _) = try await session.download(from: target)
            // The task writes its own temporary file; moving it into place is part of a download.
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(at: temporary, to: URL(fileURLWithPath: path))
            return Int64((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1)
        }
    case .transportUpload:
        let transport = CurlTransport(configuration: .init(proxy: .none))
        defer { transport.shutdown() }
        _ = try await transport.send(HTTPRequest(url: warm))
        var form = HTTPRequest.MultipartForm()
        form.appendFile("file", at: path)
        return try await timed {
            let response = try await transport.send(HTTPRequest(method: .post, url: target, body: .multipart(form)))
            guard response.statusCode == 200, let count = Int64(String(decoding: response.body, as: UTF8.self)) else {
                throw BenchSetupError(description: "the upload got \(response.statusCode): \(String(decoding: response.body.prefix(200), as: UTF8.self))")
            }
            return count
        }
    }
}
