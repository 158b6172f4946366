import AIFNetworking
import ArgumentParser
import Foundation

/// `aif call SERVICE METHOD-NAME …`: builds, signs and sends one request.
struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build, sign and send one request through a configured service.",
        discussion: """
            Sends the request as a manager load: redirects re-signed, failures retried as the \
            service's retry policy says (--verbose shows each attempt). Prints the response body on \
            standard output and exits 0 for a 2xx status; otherwise \
            prints the status or the error on standard error and exits 1.

            Bodies: the parameters go as a JSON body (--json) or a URL-encoded one (--urlencoded) \
            by the service's choice; --data sends text or a file (@path) as it is, signed over its \
            digest, the parameters in the query; --form sends multipart/form-data fields and files \
            (name=value, name=@path), which a scheme that hashes the body cannot sign.
            """
    )

    @OptionGroup var options: ServiceOptions

    @Option(help: "The request method: GET, POST, PUT, DELETE, PATCH or HEAD.")
    var method: String = "GET"

    @Option(help: "A JSON object whose members become the parameters, sent as a JSON body.")
    var json: String?

    @Flag(help: "Send the parameters as an application/x-www-form-urlencoded body instead of JSON.")
    var urlencoded = false

    @Option(help: "A body sent as it is: text, or @path for a file's bytes (streamed, signed over its digest).")
    var data: String?

    @Option(name: .customLong("form"), help: "A multipart/form-data part: name=value, or name=@path for a file (repeatable).")
    var formParts: [String] = []

    @Flag(help: "Print the equivalent curl command (secrets redacted) instead of sending.")
    var curl = false

    func validate() throws {
        let allowed = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"]
        let method = method.uppercased()
        guard allowed.contains(method) else {
            throw ValidationError("--method must be one of \(allowed.joined(separator: ", ")), not \(self.method)")
        }
        let bodies = [json != nil ? "--json" : nil, urlencoded ? "--urlencoded" : nil, data != nil ? "--data" : nil, formParts.isEmpty ? nil : "--form"].compactMap { $0 }
        if bodies.count > 1 {
            throw ValidationError("\(bodies.joined(separator: " and ")) cannot be combined: a request has one body")
        }
        if (method == "GET" || method == "HEAD"), let body = bodies.first, body != "--json" {
            throw ValidationError("\(body) sends a body, which a \(method) request does not have: add --method POST (or PUT, PATCH)")
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

    /// The body given by --data or --form, if any.
    private func body() throws -> HTTPRequest.Body? {
        if let data {
            return data.hasPrefix("@") ? .file(path: String(data.dropFirst())) : .bytes(Data(data.utf8))
        }
        guard !formParts.isEmpty else { return nil }
        var form = MultipartForm()
        for part in formParts {
            guard let equals = part.firstIndex(of: "="), equals != part.startIndex else { throw ValidationError("--form \(part) is not name=value or name=@path") }
            let name = String(part[..<equals])
            let value = part[part.index(after: equals)...]
            if value.hasPrefix("@") { form.appendFile(name, at: String(value.dropFirst())) } else { form.append(name, String(value)) }
        }
        return .multipart(form)
    }

    private func send() async throws {
        let (registry, resolved) = try options.resolve()
        let parameters = try options.parameters(over: json.map(Self.parameters(fromJSON:)) ?? [:])
        let body = try body()
        let endpoint = Endpoint<NoContent>(
            service: resolved.service.name, methodName: options.methodName, method: HTTPMethod(rawValue: method.uppercased()),
            bodyEncoding: urlencoded ? .form : (json != nil ? .json : nil), headers: try options.headerFields())

        if curl {
            let request = try RequestGenerator().makeRequest(
                for: resolved, methodName: endpoint.methodName, method: endpoint.method, parameters: parameters,
                headers: endpoint.headers, bodyEncoding: endpoint.bodyEncoding, rawBody: body)
            print(request.curlCommand())
            return
        }
        let (manager, transport) = options.manager(endpoint, registry: registry, resolved: resolved)
        defer { transport.shutdown() }
        do {
            let response = if let body { try await manager.load(parameters, sending: body) } else { try await manager.load(parameters) }
            options.describe(statusCode: response.statusCode, headers: response.headers, metrics: response.metrics, attempts: response.attempts)
            FileHandle.standardOutput.write(response.data)
        } catch {
            guard let response = error.response else { throw error }
            options.describe(statusCode: response.statusCode, headers: response.headers, metrics: response.metrics, attempts: error.attempts)
            FileHandle.standardOutput.write(response.body)
            printError("aif: \(error)")
            throw ExitCode.failure
        }
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
