import AIFNetworking
import ArgumentParser
import Foundation
import Logging

/// `aif`: try a service configuration from the shell.
@main
struct Aif: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aif",
        abstract: "Send requests through AIFNetworking services defined in config files.",
        subcommands: [Call.self]
    )
}

/// `aif call SERVICE METHOD-NAME …`: builds, signs and sends one request.
struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build, sign and send one request through a configured service.",
        discussion: """
            Sends the request as a manager load: redirects re-signed, failures retried as the \
            service's retry policy says (--verbose shows each attempt). Prints the response body on \
            standard output and exits 0 for a 2xx status; otherwise \
            prints the status or the error on standard error and exits 1.
            """
    )

    @Argument(help: "The service name, as registered by its config file.")
    var service: String

    @Argument(help: "The method name (path under the API version), with {placeholders} filled from --param.")
    var methodName: String

    @Option(name: .customLong("config"), help: "A service config file or a folder of them (repeatable; default: Configs/).")
    var configs: [String] = []

    @Option(name: .customLong("env"), help: "The environment to use (default: AIF_ENVIRONMENT, then the service's default).")
    var environment: String?

    @Option(help: "The request method: GET, POST, PUT, DELETE, PATCH or HEAD.")
    var method: String = "GET"

    @Option(name: .customLong("param"), help: "A parameter as key=value (repeatable).")
    var parameters: [String] = []

    @Option(help: "A JSON object whose members become the parameters, sent as a JSON body.")
    var json: String?

    @Flag(help: "Send the parameters as a form body instead of JSON.")
    var form = false

    @Option(name: .customLong("header"), help: "A header as 'Name: value' (repeatable).")
    var headers: [String] = []

    @Flag(help: "Print the equivalent curl command (secrets redacted) instead of sending.")
    var curl = false

    @Flag(help: "Show the service's retry policy, each attempt (request, response, retry and why), headers and timings on standard error.")
    var verbose = false

    func validate() throws {
        let allowed = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"]
        guard allowed.contains(method.uppercased()) else {
            throw ValidationError("--method must be one of \(allowed.joined(separator: ", ")), not \(method)")
        }
        if json != nil && form {
            throw ValidationError("--json and --form cannot be combined")
        }
    }

    func run() async throws {
        do {
            try await send()
        } catch let error as ExitCode {
            throw error
        } catch {
            printError("aif: \(error)")
            throw ExitCode.failure
        }
    }

    private func send() async throws {
        let registry = ServiceRegistry()
        for path in configs.isEmpty ? ["Configs"] : configs {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ValidationError("no config file or folder at \(path)")
            }
            let url = URL(fileURLWithPath: path)
            if isDirectory.boolValue {
                try registry.registerServices(inDirectory: url)
            } else {
                registry.register(try ConfiguredService.load(from: url))
            }
        }
        let serviceName = ServiceName(rawValue: service)
        if let environment {
            registry.setEnvironment(EnvironmentName(rawValue: environment), for: serviceName)
        }
        let resolved = try registry.resolve(serviceName)

        var parameters = Parameters()
        if let json {
            parameters = try Self.parameters(fromJSON: json)
        }
        for pair in self.parameters {
            guard let equals = pair.firstIndex(of: "=") else { throw ValidationError("--param \(pair) is not key=value") }
            parameters[String(pair[..<equals])] = .string(String(pair[pair.index(after: equals)...]))
        }
        var headerFields = HTTPHeaders()
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else { throw ValidationError("--header \(header) is not 'Name: value'") }
            headerFields.add(name: String(header[..<colon]).trimmingCharacters(in: .whitespaces),
                             value: String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        let endpoint = Endpoint<NoContent>(
            service: serviceName, methodName: methodName, method: HTTPMethod(rawValue: method.uppercased()),
            bodyEncoding: form ? .form : (json != nil ? .json : nil), headers: headerFields)

        if curl {
            let request = try RequestGenerator().makeRequest(
                for: resolved, methodName: endpoint.methodName, method: endpoint.method, parameters: parameters,
                headers: endpoint.headers, bodyEncoding: endpoint.bodyEncoding)
            print(request.curlCommand())
            return
        }
        if verbose {
            printError("* \(resolved.service.name) / \(resolved.environmentName): \(resolved.service.retryPolicy)"
                + (resolved.authenticator != nil ? "; credentials from its authenticator" : ""))
        }
        // The load goes through the manager layer, as an app's would: the service's retry
        // policy, authenticator and clock correction apply, and `--verbose` shows the proxy's
        // log — each attempt, each retry and why.
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let logger = Logger(label: "aif") { _ in VerboseLogHandler(logLevel: verbose ? .debug : .critical) }
        let proxy = APIProxy(transport: transport, logger: logger)
        let manager = APIManager(endpoint, proxy: proxy, registry: registry, cache: ResponseCache())
        do {
            let response = try await manager.load(parameters)
            if verbose { Self.describe(statusCode: response.statusCode, headers: response.headers, metrics: response.metrics, attempts: response.attempts) }
            FileHandle.standardOutput.write(response.data)
        } catch {
            guard let response = error.response else { throw error }
            if verbose { Self.describe(statusCode: response.statusCode, headers: response.headers, metrics: response.metrics, attempts: error.attempts) }
            FileHandle.standardOutput.write(response.body)
            printError("aif: \(error)")
            throw ExitCode.failure
        }
    }

    /// Prints the response's status, headers and timings on standard error.
    private static func describe(statusCode: Int, headers: HTTPHeaders, metrics: TransferMetrics, attempts: Int) {
        printError("< \(statusCode)")
        for field in headers.redactingSecrets() { printError("< \(field.name): \(field.value)") }
        printError("* connect \(metrics.connect), TLS \(metrics.tlsHandshake), first byte \(metrics.timeToFirstByte), total \(metrics.total); "
            + "\(metrics.bytesReceived) bytes received; \(attempts) \(attempts == 1 ? "attempt" : "attempts")")
    }

    /// The members of a JSON object as parameters.
    static func parameters(fromJSON text: String) throws -> Parameters {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw ValidationError("--json must be a JSON object")
        }
        return object.mapValues(parameterValue)
    }

    private static func parameterValue(_ value: Any) -> ParameterValue {
        switch value {
        case let text as String: .string(text)
        case let number as NSNumber:
            String(describing: type(of: number)) == "__NSCFBoolean" ? .bool(number.boolValue)
                : number.doubleValue == number.doubleValue.rounded() && abs(number.doubleValue) < 1e15 ? .int(number.intValue) : .double(number.doubleValue)
        case let array as [Any]: .array(array.map(parameterValue))
        case let object as [String: Any]: .object(object.mapValues(parameterValue))
        default: .null
        }
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
