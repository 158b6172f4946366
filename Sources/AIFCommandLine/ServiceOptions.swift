// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation
import Logging

/// What every command that calls a service takes: the service and method, where its config is,
/// the environment, parameters, headers, and `--verbose`.
struct ServiceOptions: ParsableArguments {
    @Argument(help: "The service name, as registered by its config file.")
    var service: String

    @Argument(help: "The path (under the service's base URL and API version), with {placeholders} filled from --param.")
    var path: String

    @Option(name: .customLong("config"), help: "A service config file or a folder of them (repeatable; default: Configs/).")
    var configs: [String] = []

    @Option(name: .customLong("env"), help: "The environment to use (default: AIF_ENVIRONMENT, then the service's default).")
    var environment: String?

    @Option(name: .customLong("param"), help: "A parameter as key=value (repeatable; a key given again sends all its values, as the service encodes arrays).")
    var parameters: [String] = []

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header as 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(help: "Give up after this many seconds in all (attempts and waits between them included).")
    var timeout: Double?

    @Option(name: .customLong("record"), help: "Write the response as a fixture under this folder (DIR/SERVICE/PATH.METHOD.json), secrets left out, for a mock environment to replay.")
    var recordDirectory: String?

    @Option(name: .customLong("cacert"), help: "Trust the certificate authorities of this PEM file (a private CA) instead of the system's, as curl's --cacert.")
    var certificateAuthorities: String?

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Show the service's retry policy, each attempt (request, response, retry and why), headers and timings on standard error.")
    var verbose = false

    /// The registry of the configured services, and the service resolved in it.
    func resolve() throws -> (ServiceRegistry, ServiceRegistry.ResolvedService) {
        let registry = ServiceRegistry()
        for file in try configFiles(configs).services {
            registry.register(try ServiceRegistry.ConfiguredService.load(from: file))
        }
        let serviceName = ServiceName(rawValue: service)
        if let environment {
            registry.setEnvironment(ServiceEnvironment.Name(rawValue: environment), for: serviceName)
        }
        let resolved: Result<ServiceRegistry.ResolvedService, ServiceError> = Result { () throws(ServiceError) in try registry.resolve(serviceName) }
        switch resolved {
        case .success(let resolved):
            return (registry, resolved)
        case .failure(.unknownService(_, let known)):
            throw CommandFailure(.configuration, "no service is called \"\(service)\"" + suggestion(for: service, among: known.map(\.rawValue)))
        case .failure(.unknownEnvironment(let name, _, let known)):
            throw CommandFailure(.configuration, "service \"\(service)\" has no environment \"\(name)\"" + suggestion(for: name.rawValue, among: known.map(\.rawValue)))
        case .failure(let error):
            throw error
        }
    }

    /// The `--timeout` as the load's total timeout.
    var timeouts: HTTPRequest.Timeouts? {
        timeout.map { HTTPRequest.Timeouts(total: .seconds($0)) }
    }

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout <= 86_400) {
            throw ValidationError("--timeout \(timeout) must be a number of seconds above 0 (a day at most)")
        }
        if let path = certificateAuthorities, !FileManager.default.isReadableFile(atPath: path) {
            throw ValidationError("--cacert \(path) cannot be read")
        }
    }

    /// The `--param` pairs over `base`: a key given once is a string, a key given again an array
    /// of all its values, in order.
    func parameters(over base: Parameters = [:]) throws -> Parameters {
        var values: [(key: String, values: [String])] = []
        for pair in self.parameters {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else { throw ValidationError("--param \(pair) is not key=value") }
            let key = String(pair[..<equals])
            let value = String(pair[pair.index(after: equals)...])
            if let index = values.firstIndex(where: { $0.key == key }) { values[index].values.append(value) } else { values.append((key, [value])) }
        }
        var parameters = base
        for (key, given) in values {
            parameters[key] = given.count == 1 ? .string(given[0]) : .array(given.map(JSONValue.string))
        }
        return parameters
    }

    /// The `--header` fields.
    func headerFields() throws -> HTTPHeaders {
        var fields = HTTPHeaders()
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else { throw ValidationError("--header \(header) is not 'Name: value'") }
            fields.add(name: String(header[..<colon]).trimmingCharacters(in: .whitespaces),
                       value: String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        return fields
    }

    /// A manager for the endpoint with a transport and proxy of its own — loads go through the
    /// manager layer as an app's would: the service's retry policy, authenticator and clock
    /// correction apply, `--verbose` shows the proxy's log, and `--record` writes the response
    /// as a fixture. Shut the transport down after.
    func manager<Content>(_ endpoint: Endpoint<Content>, registry: ServiceRegistry, resolved: ServiceRegistry.ResolvedService) -> (APIManager<Content>, CurlTransport) {
        if verbose {
            printError("* \(resolved.service.name) / \(resolved.environmentName): \(resolved.service.retryPolicy)"
                + (resolved.authenticator != nil ? "; credentials from its authenticator" : ""))
        }
        let tls = CurlTransport.TLS(certificateAuthorities: certificateAuthorities.map { .file(path: $0) })
        let transport = CurlTransport(configuration: CurlTransport.Configuration(tls: tls))
        let logger = Logger(label: "aif") { _ in VerboseLogHandler(logLevel: verbose ? .debug : recordDirectory != nil ? .warning : .critical) }
        let recorder = recordDirectory.map { FixtureTransport.Recorder(directory: URL(filePath: $0, directoryHint: .isDirectory)) }
        let proxy = APIProxy(transport: transport, logger: logger, recorder: recorder ?? .fromEnvironment(), observers: [WaitAnnouncer()])
        return (APIManager(endpoint, proxy: proxy, registry: registry, cache: ResponseCache()), transport)
    }

    /// Prints a response's status, headers and timings on standard error, for `--verbose`.
    func describe(statusCode: Int, headers: HTTPHeaders, metrics: HTTPResponse.Metrics, attempts: Int) {
        guard verbose else { return }
        printError("< \(statusCode)")
        for field in headers.redactingSecrets() { printError("< \(field.name): \(field.value)") }
        printError("* connect \(metrics.connect), TLS \(metrics.tlsHandshake), first byte \(metrics.timeToFirstByte), total \(metrics.total); "
            + "\(metrics.bytesReceived) bytes received; \(attempts) \(attempts == 1 ? "attempt" : "attempts")")
    }
}

/// Says on standard error when a load waits because the server said how long (`aif: waiting
/// 30 s (Retry-After)`), which may be long: a command that seems to hang says why.
final class WaitAnnouncer: APIProxy.LoadObserver, APIProxy.LoadObservation {
    func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? { self }

    func loadWillRetry(_ retry: RetryPolicy.Attempt) {
        guard let header = retry.waitHeader else { return }
        printError("aif: waiting \(RetryPolicy.Reason.seconds(retry.delay)) s (\(header)) before attempt \(retry.number) of \(retry.maximum): \(retry.reason)")
    }
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Prints the library's log lines on standard error as `* line`, for `--verbose`.
struct VerboseLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        printError("* \(event.message)")
    }
}
#endif
