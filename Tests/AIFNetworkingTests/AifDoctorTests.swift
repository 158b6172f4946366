@testable import TestSupport
import AIFNetworking
import AIFNetworkingTesting
import Foundation
import Testing

/// `aif doctor`, run as a program: the libraries, then one request to each configured
/// environment (the demo shop's, a sidecar on a Unix socket, a closed port).
@Suite("aif doctor")
struct AifDoctorTests {
    let aif = AifCommandTests()

    @Test func itNamesTheLibrariesAndReachesTheShopsEnvironments() async throws {
        let run = try await aif.aif([], command: "doctor", service: nil)
        #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
        let output = run.standardOutput
        #expect(output.contains("libcurl \(CurlTransport.Library.current.version) \(CurlTransport.Library.current.tlsLibrary ?? "")"))
        #expect(output.contains("libcrypto (request signing): OpenSSL 3."))
        for feature in ["SSL", "HTTP2", "UnixSockets"] {
            #expect(output.contains("  + \(feature) "), "\(feature) in \(output)")
        }
        let servers = try await ShopServers.shared()
        let online = try #require(output.split(separator: "\n").first { $0.hasPrefix("  shop online ") })
        #expect(online.contains(servers.online.baseURL().absoluteString))
        #expect(online.contains("reachable: "), "\(online)")
        #expect(online.contains("connect "))
        #expect(output.contains("  shop offline "))
        #expect(output.split(separator: "\n").contains { $0.hasPrefix("  shop mock ") && $0.contains("mock: answered from ") && $0.contains("nothing sent") })
    }

    @Test func anUnreachableEnvironmentIsNamedAndFailsTheRun() async throws {
        let closed = try RawServer.closedPort()
        let run = try await aif.aif(["--timeout", "2"], command: "doctor", service: nil, onlineURL: URL(string: "http://127.0.0.1:\(closed)")!)
        #expect(run.status == 3, "\(run.standardOutput)")
        let online = try #require(run.standardOutput.split(separator: "\n").first { $0.hasPrefix("  shop online ") })
        #expect(online.contains("UNREACHABLE: connection refused"), "\(online)")
    }

    @Test func offlineItSendsNothing() async throws {
        let run = try await aif.aif(["--offline"], command: "doctor", service: nil)
        #expect(run.status == 0)
        #expect(run.standardOutput.contains("features (+ built in, - not built in):"))
        #expect(!run.standardOutput.contains("environments ("))
    }

    @Test func anEnvironmentOnASocketIsReachedThere() async throws {
        let server = try await ConnectionServers.unixSocket()
        let folder = FileManager.default.temporaryDirectory.appending(path: "aif-doctor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"""
            {"name": "sidecar", "circuitBreaker": {"failuresToOpen": 3, "counted": ["timeout", "serverError"], "serverErrorStatuses": [503]},
             "environments": {"online": {"baseURL": "http://sidecar", "unixSocket": "\#(server.unixSocketPath ?? "")"}}}
            """#.utf8)
            .write(to: folder.appending(path: "sidecar.json"))
        let run = try await Shell.run(AifCommandTests.aifPath, ["doctor", "--config", folder.path])
        #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
        #expect(run.standardOutput.contains("  sidecar online  http://sidecar  [over the Unix socket \(server.unixSocketPath ?? "")]  reachable: 404 in "))
        // Each environment's circuit breaking, as its config says.
        #expect(run.standardOutput.contains("  circuit: opens after 3 failures in a row (timeouts, 503), probed by 1 request after 30 s\n"), "\(run.standardOutput)")
    }
}
