// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation

/// `aif doctor`: what this machine's libcurl and OpenSSL can do, what AIFNetworking uses of
/// them, and which configured environments answer right now.
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Show the libcurl and OpenSSL in use, their features, and which configured environments are reachable.",
        discussion: """
            Each real environment of each configured service gets one GET of its base URL, \
            unsigned, all at once: any HTTP answer counts as reachable, with the time each \
            phase took (name lookup, connect, TLS, first byte). Mock environments send nothing.

            Examples:
              aif doctor
              aif doctor --config Configs/shop.json --timeout 2
              aif doctor --offline

            Exit status: 0 when every environment checked answered; 2 when a config file \
            cannot be read; 3 when an environment could not be reached.
            """
    )

    @Option(name: .customLong("config"), help: "A service config file or a folder of them (repeatable; default: Configs/).")
    var configs: [String] = []

    @Option(help: "Seconds each environment has to answer.")
    var timeout: Double = 5

    @Flag(help: "Only describe the libraries; send nothing.")
    var offline = false

    func validate() throws {
        if !(timeout > 0 && timeout <= 600) {
            throw ValidationError("--timeout \(timeout) must be a number of seconds above 0 (ten minutes at most)")
        }
    }

    func run() async throws {
        try await reportingFailures {
            print(libraryReport(CurlTransport.Library.current).joined(separator: "\n"))
            guard !offline else { return }
            print("")
            let (environments, unreadable) = configuredEnvironments()
            let outcomes = await reach(environments)
            print(reachabilityReport(outcomes, unreadable: unreadable).joined(separator: "\n"))
            if !unreadable.isEmpty { throw FailureClass.configuration.exitCode }
            if outcomes.contains(where: { if case .unreachable = $0.outcome { true } else { false } }) {
                throw FailureClass.connection.exitCode
            }
        }
    }

    /// The versions, then each feature this library cares about: built in or not, and its use.
    func libraryReport(_ library: CurlTransport.Library) -> [String] {
        var lines = [
            "AIFNetworking \(aifNetworkingVersion)",
            "libcurl \(library.version)" + ([library.tlsLibrary].compactMap { $0 } + library.components).map { " " + $0 }.joined(),
            "libcrypto (request signing): \(library.signingLibrary)",
            "protocols: \(library.protocols.joined(separator: " ")) (AIFNetworking sends http and https)",
            "",
            "features (+ built in, - not built in):",
        ]
        let width = CurlTransport.Library.featureUses.map(\.feature.count).max() ?? 0
        for use in CurlTransport.Library.featureUses {
            let present = library.has(use.feature)
            let note = present || !use.isUsed ? use.use : "missing: " + use.use
            lines.append("  \(present ? "+" : "-") \(use.feature.padding(toLength: width, withPad: " ", startingAt: 0))  \(note)")
        }
        let others = library.features.filter { name in !CurlTransport.Library.featureUses.contains { $0.feature.lowercased() == name.lowercased() } }
        if !others.isEmpty { lines.append("  also built in, not used: \(others.joined(separator: " "))") }
        return lines
    }

    /// One environment to check.
    struct Target: Sendable {
        let service: ServiceName
        let environment: ServiceEnvironment.Name
        let settings: ServiceEnvironment
        /// The environment's circuit breaking (its own, else the service's), if any.
        let circuit: CircuitBreaker.Policy?
        var url: URL {
            settings.apiVersion.isEmpty ? settings.baseURL : settings.baseURL.appending(path: settings.apiVersion)
        }
    }

    /// What checking an environment found.
    enum Outcome: Sendable {
        case mock(fixtures: String)
        case answered(status: Int, metrics: HTTPResponse.Metrics)
        case unreachable(String)
    }

    /// Every environment of every readable config file, and the errors of those it cannot read.
    func configuredEnvironments() -> ([Target], [String]) {
        var targets: [Target] = []
        var unreadable: [String] = []
        do {
            for file in try configFiles(configs).services {
                do {
                    let service = try ServiceRegistry.ConfiguredService.load(from: file)
                    for name in service.environments.keys.sorted() {
                        let settings = service.environments[name]!
                        targets.append(Target(service: service.name, environment: name, settings: settings, circuit: settings.circuitBreaker ?? service.circuitBreaker))
                    }
                } catch {
                    unreadable.append("\(error)")
                }
            }
        } catch {
            unreadable.append("\(error)")
        }
        return (targets, unreadable)
    }

    /// One GET of each environment's base URL, all at once, on a transport of their own.
    func reach(_ targets: [Target]) async -> [(target: Target, outcome: Outcome)] {
        let limit = Duration.milliseconds(Int64((timeout * 1_000).rounded(.up)))
        let transport = CurlTransport(configuration: CurlTransport.Configuration(timeouts: HTTPRequest.Timeouts(connect: limit, total: limit, idle: limit), redirects: .never))
        defer { transport.shutdown() }
        return await withTaskGroup(of: (Int, Outcome).self) { group in
            for (index, target) in targets.enumerated() {
                group.addTask {
                    if let mock = target.settings.mock { return (index, .mock(fixtures: mock.fixtures.path)) }
                    var request = HTTPRequest(url: target.url)
                    request.connection = target.settings.connection
                    do {
                        let response = try await transport.send(request)
                        return (index, .answered(status: response.statusCode, metrics: response.metrics))
                    } catch {
                        return (index, .unreachable("\(error)"))
                    }
                }
            }
            var outcomes = [Outcome?](repeating: nil, count: targets.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return zip(targets, outcomes).map { ($0, $1!) }
        }
    }

    /// A line per environment: where it is, how it is reached, and what answered.
    func reachabilityReport(_ outcomes: [(target: Target, outcome: Outcome)], unreadable: [String]) -> [String] {
        var lines = ["environments (one GET of each base URL, \(formatted(seconds: timeout)) s to answer):"]
        if outcomes.isEmpty && unreadable.isEmpty {
            lines.append("  no service config files (*.json) in \(configs.isEmpty ? "Configs" : configs.joined(separator: ", "))")
        }
        let width = outcomes.map { "\($0.target.service) \($0.target.environment)".count }.max() ?? 0
        for (target, outcome) in outcomes {
            let label = "\(target.service) \(target.environment)".padding(toLength: width, withPad: " ", startingAt: 0)
            var line = "  \(label)  " + (target.settings.mock == nil ? target.url.absoluteString : "(mock)")
            if let connection = target.settings.connection { line += "  [\(connection.summary)]" }
            switch outcome {
            case .mock(let fixtures):
                line += "  mock: answered from \(fixtures), nothing sent"
            case .answered(let status, let metrics):
                line += "  reachable: \(status) in \(milliseconds(metrics.total)) ms (name lookup \(milliseconds(metrics.nameLookup)), connect \(milliseconds(metrics.connect))"
                line += metrics.tlsHandshake > .zero ? ", TLS \(milliseconds(metrics.tlsHandshake))" : ""
                line += ", first byte \(milliseconds(metrics.timeToFirstByte)))"
            case .unreachable(let error):
                line += "  UNREACHABLE: \(error)"
            }
            if let circuit = target.circuit { line += "  circuit: \(circuit)" }
            lines.append(line)
        }
        for problem in unreadable { lines.append("  unreadable: \(problem)") }
        return lines
    }

    private func milliseconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
        return value < 10 ? String(format: "%.1f", value) : String(Int(value.rounded()))
    }

    private func formatted(seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

extension HTTPRequest.Connection {
    /// The settings in a few words: socket, overrides, certificate (never a key).
    var summary: String {
        var parts: [String] = []
        if let path = unixSocketPath { parts.append("over the Unix socket \(path)") }
        if !hostOverrides.isEmpty { parts.append("connect-to " + hostOverrides.map(\.description).joined(separator: ", ")) }
        if let clientCertificate { parts.append(clientCertificate.description) }
        return parts.joined(separator: "; ")
    }
}
#endif
