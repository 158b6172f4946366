@testable import AIFTransport
@testable import TestSupport
import AIFNetworkingTesting
import Foundation
import Hummingbird
import ProcessResources
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Thousands of transfers in flight on one transport, each waiting a second for its answer, in a
/// process of its own (`aif-test-helper in-flight`) so that its descriptors can be counted
/// alone. The server here answers `wait/MS` after MS milliseconds and accepts 8,192 waiting
/// connections, so that none of them waits for a SYN retry.
///
/// `make test` runs this suite on its own, after the others (the Makefile's `ALONE`): it keeps
/// both cores busy for seconds, which other suites' time bounds are not meant to absorb.
@Suite("CurlTransport: thousands of transfers in flight", .serialized)
struct CurlTransportScaleTests {
    /// The transfers each test keeps in flight at once.
    static let inFlight = 4096

    private static let server = Task<LocalServer, any Error> {
        raiseDescriptorLimit()
        let router = Router()
        router.get("wait/:milliseconds") { request, context -> String in
            if let tag = request.uri.queryParameters.get("tag") { Arrivals.shared.arrived(String(tag)) }
            try await Task.sleep(for: .milliseconds(context.parameters.get("milliseconds", as: Int.self) ?? 0))
            return "waited"
        }
        // Answers once `count` requests with `tag` have come to `wait`.
        router.get("arrived/:tag/:count") { _, context -> String in
            await Arrivals.shared.wait(for: context.parameters.get("tag") ?? "", count: context.parameters.get("count", as: Int.self) ?? 1)
            return "all arrived"
        }
        return try await LocalServer.start(router: router, backlog: 8192)
    }

    /// Runs the helper and returns its counts by name, and its whole output for messages.
    private func run(_ mode: String) async throws -> (counts: [String: Double], output: String) {
        let server = try await Self.server.value
        let tag = Arrivals.tag()
        var arguments = ["in-flight", server.url("wait/1000?tag=\(tag)").absoluteString, "\(Self.inFlight)", mode]
        if mode == "shutdown" { arguments.append(server.url("arrived/\(tag)/\(Self.inFlight)").absoluteString) }
        let run = try await Shell.run(helperPath, arguments)
        let output = run.standardOutput + run.standardError
        #expect(run.status == 0, "\(output)")
        var counts: [String: Double] = [:]
        for field in output.split(whereSeparator: \.isWhitespace) {
            let parts = field.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { counts[String(parts[0])] = value }
        }
        return (counts, output)
    }

    @Test func everyTransferEndsOnceAndTheDescriptorsAreReturned() async throws {
        let (counts, output) = try await run("complete")
        #expect(counts["answered"] == Double(Self.inFlight), "\(output)")
        #expect(counts["missing"] == 0, "\(output)")
        #expect(counts["duplicated"] == 0, "\(output)")
        #expect(counts["failed"] == 0, "\(output)")
        #expect(counts["fds-after"] != nil && counts["fds-after"] == counts["fds-before"], "\(output)")
    }

    @Test func cancellingHalfAtRandomMomentsEndsEachOnce() async throws {
        let (counts, output) = try await run("cancel-half")
        let half = Double(Self.inFlight / 2)
        #expect(counts["missing"] == 0, "\(output)")
        #expect(counts["duplicated"] == 0, "\(output)")
        #expect(counts["failed"] == 0, "\(output)")
        // Only the transfers asked to cancel end cancelled; the others are all answered. A
        // cancellation that comes after its answer (the answer is a second away; the
        // cancellations all come within 800 ms) finds the transfer ended and does nothing.
        #expect(counts["cancelled-unasked"] == 0, "\(output)")
        #expect((counts["answered"] ?? 0) - (counts["answered-though-cancelled"] ?? 0) == half, "\(output)")
        #expect((counts["cancelled"] ?? 0) + (counts["answered-though-cancelled"] ?? 0) == half, "\(output)")
        #expect((counts["cancelled"] ?? 0) > half / 2, "\(output)")
        #expect(counts["fds-after"] != nil && counts["fds-after"] == counts["fds-before"], "\(output)")
    }

    @Test func shuttingDownWithAllInFlightEndsEachOnce() async throws {
        let (counts, output) = try await run("shutdown")
        #expect(counts["missing"] == 0, "\(output)")
        #expect(counts["duplicated"] == 0, "\(output)")
        #expect(counts["failed"] == 0, "\(output)")
        #expect((counts["answered"] ?? 0) + (counts["cancelled"] ?? 0) == Double(Self.inFlight), "\(output)")
        #expect((counts["cancelled"] ?? 0) > 0, "\(output)")
        // Shutting down frees 4,096 handles and closes their connections; it does not wait for
        // the answers (a second away).
        #expect((counts["shutdown-seconds"] ?? 99) < 5, "\(output)")
        #expect(counts["fds-after"] != nil && counts["fds-after"] == counts["fds-before"], "\(output)")
    }
}
