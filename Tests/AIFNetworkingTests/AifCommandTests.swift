import DemoServer
import Foundation
import Testing

/// The `aif` program, built beside the tests, run against the demo shop with the repository's
/// `Configs/shop.json`: its loads go through the manager layer, with the service's retry policy.
@Suite("aif call: the service's retry policy, said with --verbose")
struct AifCommandTests {
    static var aifPath: String {
        URL(fileURLWithPath: helperPath).deletingLastPathComponent().appending(path: "aif").path
    }

    /// `aif call shop ARGUMENTS… --config Configs/` with the shop's URLs and keys in the environment.
    func aif(_ arguments: [String]) async throws -> Shell.Run {
        let servers = try await ShopServers.shared()
        return try await Shell.run(Self.aifPath, ["call", "shop"] + arguments + ["--config", ShopServers.configs.path], environment: [
            "SHOP_ONLINE_URL": servers.online.baseURL().absoluteString,
            "SHOP_OFFLINE_URL": servers.offline.baseURL().absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey,
            "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ])
    }

    @Test func aFlakyEndpointIsRetriedAsTheServiceSaysAndVerboseSaysSo() async throws {
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--param", "failures=2", "--verbose"])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try JSONDecoder().decode(FlakyReport.self, from: Data(run.standardOutput.utf8))
        #expect(report.attempts == 3)
        #expect(Set(report.nonces).count == 3)
        #expect(run.standardError.contains("* shop / online: up to 2 retries of DELETE, GET, HEAD, OPTIONS, PUT or a request with Idempotency-Key"))
        #expect(run.standardError.contains("attempt 2 of 3 in "))
        #expect(run.standardError.contains("attempt 3 of 3 in "))
        #expect(run.standardError.contains("the server answered 503"))
        #expect(run.standardError.contains("3 attempts"))
        // Secrets stay out of what it prints.
        #expect(!run.standardError.contains(ShopRoutes.privateKey))
    }

    @Test func withoutVerboseOnlyTheBodyIsPrinted() async throws {
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--param", "failures=1"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)
        #expect(try JSONDecoder().decode(FlakyReport.self, from: Data(run.standardOutput.utf8)).attempts == 2)
    }

    @Test func exhaustedRetriesPrintTheLastAnswerAndFail() async throws {
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--param", "failures=5", "--verbose"])
        #expect(run.status == 1)
        #expect(run.standardOutput.contains(#""code":5031"#))
        #expect(run.standardError.contains("3 attempts"))
        #expect(run.standardError.contains("aif: "))
        #expect(run.standardError.contains("503"))
    }

    @Test func aPostWithoutAnIdempotencyKeyIsNotRetried() async throws {
        // A POST's parameters go in its body, where the route does not look: it fails twice.
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--method", "POST", "--verbose"])
        #expect(run.status == 1)
        #expect(run.standardError.contains("POST is not retried without an Idempotency-Key header"))
        #expect(run.standardError.contains("; 1 attempt\n"))
        let keyed = try await aif(["flaky/aif-\(UUID().uuidString)", "--method", "POST", "--header", "Idempotency-Key: k-\(UUID().uuidString)"])
        #expect(keyed.status == 0, "\(keyed.standardError)")
        #expect(try JSONDecoder().decode(FlakyReport.self, from: Data(keyed.standardOutput.utf8)).attempts == 3)
    }
}
