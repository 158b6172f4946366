// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation

/// `aif services`: lists the configured services — never their keys.
struct Services: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "services",
        abstract: "List the services the config files define: environments, base URLs, signing, retries.",
        discussion: """
            Keys are never shown. A file whose environment variables are not set is listed with \
            the variable it lacks, and the command then exits with status 2 (configuration) \
            after listing the others.

            Examples:
              aif services
              aif services --config Configs/shop.json --config ../payments/Configs

            \(FailureClass.helpText)
            """
    )

    @Option(name: .customLong("config"), help: "A service config file or a folder of them (repeatable; default: Configs/).")
    var configs: [String] = []

    func run() async throws {
        try await reportingFailures {
            let files = try configFiles(configs).services
            let registry = ServiceRegistry()
            var lines: [String] = []
            var unreadable = 0
            for file in files {
                let service: ServiceRegistry.ConfiguredService
                do {
                    service = try ServiceRegistry.ConfiguredService.load(from: file)
                } catch {
                    lines += ["\(error)", ""]
                    unreadable += 1
                    continue
                }
                lines += describe(service, active: registry.activeEnvironment(of: service)) + [""]
            }
            if lines.isEmpty { lines = ["no service config files (*.json) in \(configs.isEmpty ? "Configs" : configs.joined(separator: ", "))", ""] }
            print(lines.dropLast().joined(separator: "\n"))
            // Listed with the others, and still a configuration error.
            if unreadable > 0 { throw FailureClass.configuration.exitCode }
        }
    }

    /// A service's lines: name and file, retries, and one line per environment with its URL (or
    /// fixtures) and signing.
    private func describe(_ service: ServiceRegistry.ConfiguredService, active: ServiceEnvironment.Name) -> [String] {
        var lines = ["\(service.name) (\(service.file))"]
        lines.append("  retries: \(service.retryPolicy)")
        lines.append("  environments (* the one used; --env or AIF_ENVIRONMENT chooses):")
        let width = service.environments.keys.map(\.rawValue.count).max() ?? 0
        for name in service.environments.keys.sorted() {
            let environment = service.environments[name]!
            var location = environment.apiVersion.isEmpty ? environment.baseURL.absoluteString : environment.baseURL.appending(path: environment.apiVersion).absoluteString
            if let mock = environment.mock {
                let latency = mock.latency.lowerBound == mock.latency.upperBound
                    ? "\(milliseconds(mock.latency.lowerBound)) ms" : "\(milliseconds(mock.latency.lowerBound))–\(milliseconds(mock.latency.upperBound)) ms"
                location = "fixtures \(mock.fixtures.path); \(latency), \(Int((mock.failureRate * 100).rounded()))% failures"
                    + (mock.seed.map { ", seed \($0)" } ?? "")
            }
            let signing = environment.credentials == nil ? "unsigned"
                : service.signer.map { $0.covering(allParameters: environment.signsAllParameters).schemeDescription } ?? "unsigned"
            let padded = name.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
            let connection = environment.connection.map { "  [\($0.summary)]" } ?? ""
            lines.append("  \(name == active ? "*" : " ") \(padded)  \(location)  [\(signing)]\(connection)")
        }
        return lines
    }

    private func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
#endif
