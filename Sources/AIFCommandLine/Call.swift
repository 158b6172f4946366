// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation

/// `aif call SERVICE METHOD-NAME …`: builds, signs and sends one request.
struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Build, sign and send one request through a configured service.",
        discussion: """
            Sends the request as a manager load: redirects re-signed, failures retried as the \
            service's retry policy says (-v shows each attempt). Prints the response body on \
            standard output — JSON indented and coloured on a terminal, --raw for the bytes as \
            they came — and, with -i (and always for HEAD), the status line and headers first.

            Parameters (--param) go in the query of a GET, HEAD or DELETE and in the body of a \
            POST, PUT or PATCH, as the service encodes bodies (JSON, or a form) or, with \
            --urlencoded, as a form; --place puts one in the path, the query, a header or the \
            body instead (tags=query:repeated, api_key=header, id=header:X-Request-ID). --json \
            gives them as a JSON object instead. -d sends text or a file (@path) as the body (not with GET or HEAD), as it is, signed over \
            its digest, the parameters then in the query; --form sends multipart/form-data fields \
            and files (name=value, name=@path), which a scheme that hashes the body cannot sign.

            Examples:
              aif call shop goods/{id} --param id=42
              aif call shop goods --param page=2 --param tag=new --param tag=sale -i
              aif call shop goods --param page_size=100 --all-pages | wc -l
              aif call shop orders -X POST --json '{"goods_id": 42, "quantity": 2}'
              aif call pets pet/{petId} -X POST --param petId=7 --param name=Rex --place name=query
              aif call pets pet/findByTags --param tag=a --param tag=b --place tag=query:repeated
              aif call shop orders -X POST -d @order.json -H 'Content-Type: application/json'
              aif call shop goods/{id} --param id=42 --curl | sh
              aif call shop goods/{id} --param id=42 --env mock --record Configs/fixtures

            \(FailureClass.helpText)
            """
    )

    @OptionGroup var options: ServiceOptions

    @Option(name: [.customShort("X"), .customLong("method")], help: "The request method: GET, POST, PUT, DELETE, PATCH or HEAD.")
    var method: String = "GET"

    @Option(help: "A JSON object whose members become the parameters (in the query of a GET, HEAD or DELETE; the body otherwise, encoded as the service encodes bodies).")
    var json: String?

    @Option(
        name: .customLong("place"),
        help: "Where a parameter goes: name=path, query, header or body; name=header:Field-Name for a header of another name; name=query:ARRAYS (brackets, indexed, repeated, comma, pipes, spaces) for how an array is written (repeatable).")
    var placements: [String] = []

    @Flag(help: "Send the parameters of a POST, PUT or PATCH as an application/x-www-form-urlencoded body instead of JSON.")
    var urlencoded = false

    @Option(name: [.customShort("d"), .customLong("data")], help: "A body sent as it is: text, or @path for a file's bytes (streamed, signed over its digest).")
    var data: String?

    @Option(name: .customLong("form"), help: "A multipart/form-data part: name=value, or name=@path for a file (repeatable).")
    var formParts: [String] = []

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and the headers before the body.")
    var include = false

    @Flag(help: "Write the body's bytes as they came: no indenting, no colours, no newline added.")
    var raw = false

    @Flag(help: "Load every page, as the service's paging says (else numbered pages from --param page=N, 1 by default), and print each item as one JSON line.")
    var allPages = false

    @Option(help: "With --all-pages: how pages are asked for: page, offset, afterLastItem (after the previous page's last item, by its ID) or link (the service's way by default).")
    var paging: String?

    @Option(help: "With --all-pages: the page's parameter (page, offset or starting_after, as the paging style has it).")
    var pageParam: String?

    @Option(help: "With --all-pages: the member holding a page's items (by default the body, if it is an array, or its array member).")
    var itemsKey: String?

    @Option(help: "With --all-pages --paging afterLastItem: the member holding an item's ID (id by default).")
    var idKey: String?

    @Option(help: "With --all-pages: the member saying whether more items follow (has_more or hasMore by default).")
    var hasMoreKey: String?

    @Option(help: "With --all-pages: the most pages to load.")
    var maxPages = 1000

    @Flag(help: "Print a curl command that sends the same signed request instead of sending it (the private key is never in it).")
    var curl = false

    @Flag(help: "With --curl: hide the signature, credentials and secret parameters, to share the command.")
    var redact = false

    @Flag(help: "With --curl: print credentials as they are (by default a credential read from an environment variable is written as a reference to it, ${NAME}, and any other as ***).")
    var showSecrets = false

    func validate() throws {
        _ = try Self.placements(from: placements)
        let allowed = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"]
        let method = method.uppercased()
        guard allowed.contains(method) else {
            throw ValidationError("-X/--method must be one of \(allowed.joined(separator: ", ")), not \(self.method)")
        }
        let bodies = [json != nil ? "--json" : nil, urlencoded ? "--urlencoded" : nil, data != nil ? "--data" : nil, formParts.isEmpty ? nil : "--form"].compactMap { $0 }
        if bodies.count > 1 {
            throw ValidationError("\(bodies.joined(separator: " and ")) cannot be combined: a request has one body")
        }
        if ["GET", "HEAD"].contains(method), let body = bodies.first(where: { $0 == "--data" || $0 == "--form" }) {
            throw ValidationError("\(body) sends a body, which this command does not send with \(method): add -X POST (or PUT, PATCH)")
        }
        if urlencoded, ["GET", "HEAD", "DELETE"].contains(method) {
            throw ValidationError("--urlencoded makes the parameters a form body, but those of a \(method) go in the query: add -X POST (or PUT, PATCH)")
        }
        if redact && !curl { throw ValidationError("--redact hides secrets in the --curl command; add --curl") }
        if showSecrets && !curl { throw ValidationError("--show-secrets shows secrets in the --curl command; add --curl") }
        if showSecrets && redact { throw ValidationError("--show-secrets and --redact cannot be combined: one shows secrets, the other hides them") }
        let pagingOptions = [
            paging != nil ? "--paging" : nil, pageParam != nil ? "--page-param" : nil, itemsKey != nil ? "--items-key" : nil, idKey != nil ? "--id-key" : nil,
            hasMoreKey != nil ? "--has-more-key" : nil, maxPages != 1000 ? "--max-pages" : nil,
        ]
        if !allPages, let stray = pagingOptions.compactMap({ $0 }).first {
            throw ValidationError("\(stray) says how to page; add --all-pages")
        }
        if let paging, PagingRule.Style(rawValue: paging) == nil {
            throw ValidationError("--paging \(paging) is not one of: \(PagingRule.Style.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if allPages, let shown = [curl ? "--curl" : nil, include ? "-i" : nil, raw ? "--raw" : nil, data != nil ? "--data" : nil, formParts.isEmpty ? nil : "--form", method == "HEAD" ? "-X HEAD" : nil].compactMap({ $0 }).first {
            throw ValidationError("--all-pages prints the items of every page, which \(shown) does not go with")
        }
        if maxPages < 1 { throw ValidationError("--max-pages must be 1 or more") }
        if curl, let shown = [include ? "-i" : nil, raw ? "--raw" : nil, options.recordDirectory != nil ? "--record" : nil].compactMap({ $0 }).first {
            throw ValidationError("\(shown) is about a response, and --curl sends no request")
        }
    }

    func run() async throws {
        try await reportingFailures(send)
    }

    /// The body given by --data or --form, if any.
    private func body() throws -> HTTPRequest.Body? {
        if let data {
            guard data.hasPrefix("@") else { return .bytes(Data(data.utf8)) }
            let path = String(data.dropFirst())
            guard FileManager.default.isReadableFile(atPath: path) else { throw CommandFailure(.configuration, "-d @\(path): no readable file there") }
            return .file(path: path)
        }
        guard !formParts.isEmpty else { return nil }
        var form = HTTPRequest.MultipartForm()
        for part in formParts {
            guard let equals = part.firstIndex(of: "="), equals != part.startIndex else { throw ValidationError("--form \(part) is not name=value or name=@path") }
            let name = String(part[..<equals])
            let value = part[part.index(after: equals)...]
            if value.hasPrefix("@") {
                let path = String(value.dropFirst())
                guard FileManager.default.isReadableFile(atPath: path) else { throw CommandFailure(.configuration, "--form \(name)=@\(path): no readable file there") }
                form.appendFile(name, at: path)
            } else {
                form.append(name, String(value))
            }
        }
        return .multipart(form)
    }

    private func send() async throws {
        let (registry, resolved) = try options.resolve()
        let parameters = try options.parameters(over: json.map(Self.parameters(fromJSON:)) ?? [:])
        let body = try body()
        let method = HTTPMethod(rawValue: method.uppercased())
        // --json gives the parameters as a JSON object; the body follows the service's encoding.
        let endpoint = Endpoint<NoContent>(
            service: resolved.service.name, path: options.path, method: method, bodyEncoding: urlencoded ? .form : nil,
            parameterPlacements: try Self.placements(from: placements), headers: try options.headerFields(), timeouts: options.timeouts)

        if curl {
            let request = try resolved.makeRequest(
                path: endpoint.path, method: endpoint.method, parameters: parameters,
                headers: endpoint.headers, bodyEncoding: endpoint.bodyEncoding, rawBody: body, placements: endpoint.parameterPlacements)
            let command = request.curlCommand(
                revealingSecrets: showSecrets, showingSignature: !redact, referringTo: redact ? [:] : ProcessInfo.processInfo.environment)
            print(command)
            if !redact, !showSecrets, command.contains("***") {
                printError("aif: a secret held in no environment variable is shown as ***, so the command is not complete; --show-secrets prints it")
            }
            return
        }
        let printer = ResponsePrinter(raw: raw, includesHead: include || method == .head)
        let (manager, transport) = options.manager(endpoint, registry: registry, resolved: resolved)
        defer { transport.shutdown() }
        if allPages {
            return try await PageWalker(rule: pagingRule(of: resolved.service), maxPages: maxPages, printer: printer).walk(manager, parameters: parameters) { response in
                options.describe(statusCode: response.statusCode, headers: response.headers, metrics: response.metrics, attempts: response.attempts)
            }
        }
        do {
            let response = if let body { try await manager.load(parameters, sending: body) } else { try await manager.load(parameters) }
            options.describe(statusCode: response.statusCode, headers: response.headers, metrics: response.metrics, attempts: response.attempts)
            printer.print(version: response.httpVersion, status: response.statusCode, headers: response.headers, body: response.data)
        } catch {
            if let response = error.response {
                options.describe(statusCode: response.statusCode, headers: response.headers, metrics: response.metrics, attempts: error.attempts)
                printer.print(version: response.httpVersion, status: response.statusCode, headers: response.headers, body: response.body)
            }
            throw error
        }
    }

    /// How --all-pages pages: the service's rule, or numbered pages, with what the options say
    /// over it (another style starts from that style's usual parameter).
    private func pagingRule(of service: any Service) -> PagingRule {
        var rule = service.paging ?? PagingRule(style: .page)
        if let paging, let style = PagingRule.Style(rawValue: paging), style != rule.style {
            rule.style = style
            rule.parameter = PagingRule.usualParameter(of: style)
        }
        if let pageParam { rule.parameter = pageParam }
        if let itemsKey { rule.itemsField = itemsKey }
        if let idKey { rule.idField = idKey }
        if let hasMoreKey { rule.hasMoreField = hasMoreKey }
        return rule
    }

    /// The placements of `--place` arguments, by parameter name.
    static func placements(from arguments: [String]) throws -> [String: Parameters.Placement] {
        var placements: [String: Parameters.Placement] = [:]
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw ValidationError("--place \(argument) is not name=where (where: path, query, header or body)")
            }
            let name = String(argument[..<equals])
            let text = argument[argument.index(after: equals)...]
            let word = text.prefix { $0 != ":" }
            let detail = text.dropFirst(word.count + 1)
            guard let location = Parameters.Placement.Location(rawValue: String(word)) else {
                throw ValidationError("--place \(argument): \"\(word)\" is not one of path, query, header, body")
            }
            var placement = Parameters.Placement(location)
            if word.count < text.count {
                switch location {
                case .header:
                    guard Parameters.Placement.isToken(String(detail)) else { throw ValidationError("--place \(argument): \"\(detail)\" is not a header's name") }
                    placement.name = String(detail)
                case .query, .body:
                    guard let arrays = Parameters.ArrayEncoding(configName: String(detail)) else {
                        throw ValidationError("--place \(argument): \"\(detail)\" is not one of \(Parameters.ArrayEncoding.configNames.joined(separator: ", "))")
                    }
                    placement.arrays = arrays
                case .path:
                    throw ValidationError("--place \(argument): a parameter in the path fills its {\(name)} and takes nothing after path")
                }
            }
            placements[name] = placement
        }
        return placements
    }

    /// A placement as `--place` takes it (`query:repeated`, `header:X-Request-ID`); `nil` for one
    /// it cannot say (a query renamed, arrays written by a function).
    static func placementArgument(_ placement: Parameters.Placement) -> String? {
        var text = placement.location.rawValue
        switch placement.location {
        case .header:
            if let name = placement.name { text += ":" + name }
        case .query, .body:
            guard placement.name == nil else { return nil }
            if let arrays = placement.arrays {
                guard let word = arrays.configName else { return nil }
                text += ":" + word
            }
        case .path: break
        }
        return text
    }

    /// The members of a JSON object as parameters.
    static func parameters(fromJSON text: String) throws -> Parameters {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw ValidationError("--json must be a JSON object")
        }
        return Parameters(object.mapValues(parameterValue))
    }

    private static func parameterValue(_ value: Any) -> JSONValue {
        switch value {
        case let text as String: .string(text)
        case let number as NSNumber:
            String(describing: type(of: number)) == "__NSCFBoolean" ? .bool(number.boolValue)
                : number.doubleValue == number.doubleValue.rounded() && abs(number.doubleValue) < 1e15 ? .integer(number.intValue) : .number(number.doubleValue)
        case let array as [Any]: .array(array.map(parameterValue))
        case let object as [String: Any]: .object(object.mapValues(parameterValue))
        default: .null
        }
    }
}
#endif
