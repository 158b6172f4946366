import AIFNetworking
import AIFNetworkingOpenAPI
import AIFNetworkingTesting
import BenchSupport
import AsyncHTTPClient
import Foundation
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import OpenAPIURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The three transports a generated client can run on, compared with one client generated from
/// `OpenAPI/bench.yaml`.
enum OpenAPITransportKind: String, CaseIterable, Sendable {
    /// This library's `CurlClientTransport`, on a ``CurlTransport`` set as the `transport` client's.
    case curl
    /// swift-openapi-async-http-client's, on an `HTTPClient` set as the `ahc` client's.
    case ahc
    /// swift-openapi-urlsession's, on a `URLSession` set as the `urlsession` client's.
    case urlSession = "urlsession"
    /// This library's `CurlClientTransport` on the test kit's stub transport, which answers at
    /// once: what the generated client, the runtime and the conversions cost without a network.
    case stub
}

/// The server URL of the benchmark document's paths: the JSON document's URL without its name.
func openAPIServerURL(_ documentURL: String) -> URL {
    URL(string: documentURL)!.deletingLastPathComponent()
}

/// The generated client on one of the transports, and how to close what is under it.
func makeOpenAPIClient(_ kind: OpenAPITransportKind, _ settings: ClientSettings) -> (Client, @Sendable () async throws -> Void) {
    let serverURL = openAPIServerURL(settings.url)
    switch kind {
    case .stub:
        let stubs = StubTransport()
        stubs.stub(.get, "small.json", with: .status(200, headers: ["Content-Type": "application/json"], body: Data(BenchPayload.json.utf8)))
        return (Client(serverURL: serverURL, transport: CurlClientTransport(stubs)), {})
    case .curl:
        let transport = makeTransport(settings)
        return (Client(serverURL: serverURL, transport: CurlClientTransport(transport)), { transport.shutdown() })
    case .ahc:
        let client = makeHTTPClient(settings)
        let transport = AsyncHTTPClientTransport(configuration: .init(client: client, timeout: .seconds(30)))
        return (Client(serverURL: serverURL, transport: transport), { try await client.shutdown() })
    case .urlSession:
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = settings.concurrency
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(configuration: configuration)
        return (Client(serverURL: serverURL, transport: URLSessionTransport(configuration: .init(session: session))), { session.invalidateAndCancel() })
    }
}

/// A client generated from the benchmark's OpenAPI document, loading and decoding the JSON
/// document `concurrency` calls at a time.
final class OpenAPIBenchClient: BenchClient {
    private let client: Client
    private let closing: @Sendable () async throws -> Void
    private let concurrency: Int

    init(_ settings: ClientSettings, on kind: OpenAPITransportKind) {
        (client, closing) = makeOpenAPIClient(kind, settings)
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await driveTasks(seconds: seconds, concurrency: concurrency) { [client] _ in
            (try? await client.getCatalogue().ok.body.json.items.count) == 6
        }
    }

    func close() async throws {
        try await closing()
    }
}

/// The large file downloaded through the generated client on `kind` (warmed up with the JSON
/// document first), written to `path` as it arrives; `timed` measures the download alone.
func openAPIDownload(
    _ kind: OpenAPITransportKind, warmURL: String, path: String, timed: (() async throws -> Int64) async throws -> TransferMeasurement
) async throws -> TransferMeasurement {
    let (client, closing) = makeOpenAPIClient(kind, ClientSettings(url: warmURL, concurrency: 1, http2: false))
    _ = try await client.getCatalogue().ok.body.json
    let measurement = try await timed {
        // No total timeout of its own: the transports' defaults (60 s, 30 s) are the only limits.
        let body = try await client.getLargeFile().ok.body.binary
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw BenchSetupError(description: "cannot create \(path)") }
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var total: Int64 = 0
        for try await chunk in body {
            try chunk.withUnsafeBytes { try file.write(contentsOf: $0) }
            total += Int64(chunk.count)
        }
        try file.close()
        return total
    }
    try await closing()
    return measurement
}
