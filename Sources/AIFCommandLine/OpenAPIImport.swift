// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import Foundation

/// An OpenAPI document's operations as API defines (`*.apis.json`): one define per operation,
/// named by its `operationId`, with what a define can hold; every construct a define cannot
/// hold is listed, never dropped in silence.
struct OpenAPIImport {
    /// One construct of the document the defines do not carry, and where it is.
    struct Unsupported: CustomStringConvertible {
        let place: String
        let problem: String
        var description: String { "\(place): \(problem)" }
    }

    /// The defines, as the JSON object of a define file.
    private(set) var defines: [String: Any] = [:]
    /// What the defines do not carry.
    private(set) var unsupported: [Unsupported] = []
    /// What the service's own config must say (its base URL and version), from `servers`.
    private(set) var serverNote: String?

    private static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// Reads the document's operations.
    ///
    /// - Parameters:
    ///   - document: The document, parsed.
    ///   - service: The service the defines call.
    /// - Throws: ``CommandFailure`` when it is not an OpenAPI 3 document.
    init(_ document: JSONValue, service: String) throws {
        guard case .object(let root) = document else { throw CommandFailure(.configuration, "the document is not an object") }
        guard case .string(let version)? = root["openapi"], version.hasPrefix("3.") else {
            let swagger = root["swagger"] != nil ? " (a Swagger 2.0 document: convert it to OpenAPI 3 first)" : ""
            throw CommandFailure(.configuration, "the document has no \"openapi\": \"3.x\" version\(swagger)")
        }
        let components = root["components"]
        readServers(root["servers"])
        for key in ["webhooks"] where root[key] != nil {
            unsupported.append(Unsupported(place: key, problem: "webhooks are requests the server sends; defines describe requests to it"))
        }
        let globalSecurity = root["security"]
        guard case .object(let paths)? = root["paths"] else {
            throw CommandFailure(.configuration, "the document has no \"paths\"")
        }
        var names: [String: String] = [:]
        for path in paths.keys.sorted() {
            guard case .object(let item) = paths[path]! else { continue }
            if case .string(let reference)? = item["$ref"] {
                unsupported.append(Unsupported(place: "paths.\(path)", problem: "a path item by reference (\(reference)) is not followed"))
                continue
            }
            let shared = parameters(item["parameters"], components: components, at: "paths.\(path).parameters")
            for method in Self.methods {
                guard case .object(let operation)? = item[method] else { continue }
                let place = "paths.\(path).\(method)"
                if let wrong = APIDefine.placeholderProblem(in: path) {
                    unsupported.append(Unsupported(place: place, problem: "not defined: the path \(path) \(wrong)"))
                    continue
                }
                var name: String
                if case .string(let id)? = operation["operationId"], !id.isEmpty {
                    name = Self.defineName(from: id)
                    if name != id {
                        unsupported.append(Unsupported(place: place, problem: "its operationId \"\(id)\" is not a define name: defined as \"\(name)\""))
                    }
                } else {
                    name = Self.derivedName(method: method, path: path)
                    unsupported.append(Unsupported(place: place, problem: "has no operationId: defined as \"\(name)\""))
                }
                if let earlier = names[name] {
                    // The method's suffix, then a number, until the name is no other's.
                    var unique = "\(name).\(method)"
                    var number = 2
                    while names[unique] != nil || unique == "DEFAULT" {
                        unique = "\(name).\(method)\(number)"
                        number += 1
                    }
                    unsupported.append(Unsupported(place: place, problem: "its name \"\(name)\" is \(earlier)'s too: defined as \"\(unique)\""))
                    name = unique
                }
                names[name] = place
                defines[name] = define(
                    operation, method: method, path: path, shared: shared, components: components, globalSecurity: globalSecurity, at: place)
            }
            for key in item.keys where !Self.methods.contains(key) && !["parameters", "summary", "description", "servers"].contains(key) {
                unsupported.append(Unsupported(place: "paths.\(path).\(key)", problem: "not an operation a define can hold"))
            }
        }
        defines["DEFAULT"] = ["service": service]
    }

    /// One operation's define.
    private mutating func define(
        _ operation: [String: JSONValue], method: String, path: String, shared: [Parameter], components: JSONValue?, globalSecurity: JSONValue?, at place: String
    ) -> [String: Any] {
        var define: [String: Any] = ["path": String(path.drop { $0 == "/" })]
        if method != "get" { define["method"] = method.uppercased() }
        var own = parameters(operation["parameters"], components: components, at: "\(place).parameters")
        // An operation's parameter replaces the path item's of the same name and place.
        own += shared.filter { common in !own.contains { $0.name == common.name && $0.location == common.location } }
        var headers: [String: String] = [:]
        var named: [String] = []
        var placements: [String: Any] = [:]
        for parameter in own {
            // A name the document gives two parameters: the one a path placeholder takes is kept
            // (the placeholder takes its value), else the first by location.
            if let other = own.first(where: { $0.name == parameter.name && $0.location != parameter.location }),
                other.location == "path" || (parameter.location != "path" && other.location < parameter.location)
            {
                unsupported.append(Unsupported(
                    place: "\(place).parameters.\(parameter.name)",
                    problem: "two parameters named \(parameter.name) (in \(other.location) and \(parameter.location)): a define's parameters have one name each; defined for the \(other.location) one"))
                continue
            }
            if parameter.location == "query" { named.append(parameter.name) }
            if let placement = placement(of: parameter, method: method, at: "\(place).parameters.\(parameter.name)") {
                placements[parameter.name] = placement
            }
            if parameter.location == "header", !APIDefine.isToken(parameter.name) {
                unsupported.append(Unsupported(place: "\(place).parameters.\(parameter.name)", problem: "\"\(parameter.name)\" is not a header name: not defined"))
                placements[parameter.name] = nil
                continue
            }
            if parameter.location == "header" {
                if let fixed = parameter.fixedValue {
                    headers[parameter.name] = fixed
                    placements[parameter.name] = nil
                } else {
                    named.append("header \(parameter.name)")
                }
            }
        }
        if !placements.isEmpty { define["placement"] = placements }
        if !headers.isEmpty { define["headers"] = headers }
        readBody(operation["requestBody"], components: components, at: "\(place).requestBody")
        if let shape = responseShape(operation["responses"], at: "\(place).responses", headers: &headers) {
            define["response"] = ["shape": shape]
        }
        if !headers.isEmpty { define["headers"] = headers }
        if case .array(let requirements)? = operation["security"] ?? globalSecurity, requirements.isEmpty || requirements.contains(.object([:])) {
            define["authorization"] = false
        }
        var summary = Self.text(operation["summary"]) ?? Self.text(operation["description"]).map { String($0.prefix { $0 != "\n" }) }
        if !named.isEmpty { summary = (summary.map { $0 + " " } ?? "") + "(\(named.joined(separator: ", ")))" }
        // A define's strings read `${NAME}` as an environment variable: the document's own
        // text keeps its `${` as text.
        if let summary { define["summary"] = summary.replacingOccurrences(of: "${", with: "$${") }
        if case .bool(true)? = operation["deprecated"] {
            unsupported.append(Unsupported(place: place, problem: "deprecated: defined all the same"))
        }
        for key in ["callbacks", "servers"] where operation[key] != nil {
            unsupported.append(Unsupported(place: "\(place).\(key)", problem: key == "servers" ? "an operation's own server: defines call their service's environment" : "callbacks are requests the server sends"))
        }
        return define
    }

    /// A parameter as far as a define is concerned.
    private struct Parameter {
        /// What its schema says it holds.
        enum Kind {
            case array, object, scalar, unknown
        }

        let name: String
        let location: String
        /// The one value it can have (`const`, a one-value `enum`), for a header sent always.
        let fixedValue: String?
        /// Its `style`, or the location's default.
        let style: String
        /// Its `explode`, or the style's default (`true` for `form` only).
        let explode: Bool
        let kind: Kind
        /// Whether it is serialized as a media type (`content`) rather than by style.
        let hasContent: Bool
    }

    /// Where a parameter goes in the define (`"query"`, `{"in": "query", "arrays": "repeated"}`),
    /// when not where the method puts parameters anyway; what the define cannot send as the
    /// document says (OpenAPI 3.1, "Style Examples") is listed.
    private mutating func placement(of parameter: Parameter, method: String, at place: String) -> Any? {
        func cannot(_ problem: String) { unsupported.append(Unsupported(place: place, problem: problem)) }
        if parameter.hasContent { cannot("content (a parameter serialized as a media type): sent as its value's text") }
        let described = "style \(parameter.style)\(parameter.explode ? " with explode" : " without explode")"
        switch parameter.location {
        case "path":
            if parameter.style != "simple" { cannot("\(described): defines fill a path placeholder in the simple style (a list as a,b,c)") }
            if parameter.kind == .object { cannot("an object in the path: defines fill a placeholder with text or a list") }
            return nil
        case "header":
            if parameter.style != "simple" { cannot("\(described): a header holds text, or a list as a,b,c (simple)") }
            if parameter.kind == .object { cannot("an object in a header: defines send a header's value as text or a list (a,b,c)") }
            return "header"
        case "query":
            let bodyMethod = ["post", "put", "patch"].contains(method)
            var arrays: String?
            switch parameter.kind {
            case .array:
                switch (parameter.style, parameter.explode) {
                case ("form", true): arrays = "repeated"
                case ("form", false): arrays = "comma"
                case ("pipeDelimited", false): arrays = "pipes"
                case ("spaceDelimited", false): arrays = "spaces"
                case ("pipeDelimited", true), ("spaceDelimited", true):
                    arrays = "repeated"
                    cannot("\(described): serialization the specification leaves undefined; defined as repeated keys (tags=a&tags=b), as form with explode")
                default:
                    cannot("\(described) for a list: defines send a query list repeated, comma-, pipe- or space-separated")
                }
            case .object:
                if parameter.style != "deepObject" || !parameter.explode {
                    cannot("an object in \(described): defines send a query object as name[key]=value (deepObject)")
                }
            case .scalar, .unknown:
                if !["form", "deepObject", "pipeDelimited", "spaceDelimited"].contains(parameter.style) {
                    cannot("\(described): not a style of a query parameter")
                }
            }
            guard let arrays else { return bodyMethod ? "query" : nil }
            return ["in": "query", "arrays": arrays]
        default:
            cannot("a \(parameter.location) parameter: defines send path, query and header parameters")
            return nil
        }
    }

    private mutating func parameters(_ value: JSONValue?, components: JSONValue?, at place: String) -> [Parameter] {
        guard case .array(let list)? = value else { return [] }
        var result: [Parameter] = []
        for (index, entry) in list.enumerated() {
            guard case .object(let parameter)? = resolve(entry, components: components, at: "\(place)[\(index)]"),
                let name = Self.text(parameter["name"]), let location = Self.text(parameter["in"])
            else { continue }
            var fixed: String?
            var kind = Parameter.Kind.unknown
            if let given = parameter["schema"], case .object(let schema)? = resolve(given, components: components, at: "\(place)[\(index)].schema") {
                if let constant = schema["const"].flatMap(Self.scalar) {
                    fixed = constant
                } else if case .array(let values)? = schema["enum"], values.count == 1 {
                    fixed = Self.scalar(values[0])
                }
                kind = Self.kind(of: schema)
            }
            let style = Self.text(parameter["style"]) ?? (location == "query" || location == "cookie" ? "form" : "simple")
            var explode = style == "form"
            if case .bool(let flag)? = parameter["explode"] { explode = flag }
            result.append(Parameter(
                name: name, location: location, fixedValue: fixed, style: style, explode: explode, kind: kind, hasContent: parameter["content"] != nil))
        }
        return result
    }

    /// What a schema holds, by its `type` (or, without one, its `items` or `properties`).
    private static func kind(of schema: [String: JSONValue]) -> Parameter.Kind {
        var types: [String] = []
        switch schema["type"] {
        case .string(let type)?: types = [type]
        case .array(let list)?: types = list.compactMap { if case .string(let type) = $0 { type } else { nil } }.filter { $0 != "null" }
        default: break
        }
        if types.contains("array") || (types.isEmpty && schema["items"] != nil) { return .array }
        if types.contains("object") || (types.isEmpty && schema["properties"] != nil) { return .object }
        return types.isEmpty ? .unknown : .scalar
    }

    /// Notes a request body a define cannot send as the service encodes parameters.
    private mutating func readBody(_ value: JSONValue?, components: JSONValue?, at place: String) {
        guard let value, case .object(let body)? = resolve(value, components: components, at: place), case .object(let content)? = body["content"] else { return }
        let types = content.keys.sorted()
        if types.contains(where: { $0.hasPrefix("application/json") || $0.hasSuffix("+json") }) { return }
        if types.contains("application/x-www-form-urlencoded") {
            unsupported.append(Unsupported(place: place, problem: "a form body: defines send parameters as the service's bodyEncoding says (set it to \"form\")"))
            return
        }
        unsupported.append(Unsupported(place: place, problem: "a body of \(types.joined(separator: ", ")): defines send parameters as JSON or a form (send others with a manager's upload)"))
    }

    /// The shape of the first 2xx answer's JSON (`list` or `object`), adding `Accept` to
    /// `headers`; notes a non-JSON answer.
    private mutating func responseShape(_ value: JSONValue?, at place: String, headers: inout [String: String]) -> String? {
        guard case .object(let responses)? = value else { return nil }
        guard let status = responses.keys.sorted().first(where: { $0.hasPrefix("2") }), case .object(let response)? = responses[status] else { return nil }
        guard case .object(let content)? = response["content"] else { return nil }
        guard let type = content.keys.sorted().first(where: { $0.hasPrefix("application/json") || $0.hasSuffix("+json") }) else {
            unsupported.append(Unsupported(
                place: "\(place).\(status)", problem: "answers \(content.keys.sorted().joined(separator: ", ")): a define decodes JSON (read others with a manager's download or stream)"))
            return nil
        }
        headers["Accept"] = type
        guard case .object(let media)? = content[type], case .object(let schema)? = media["schema"] else { return nil }
        if case .string("array")? = schema["type"] { return "list" }
        if case .array(let types)? = schema["type"], types.contains(.string("array")) { return "list" }
        return nil
    }

    private mutating func readServers(_ value: JSONValue?) {
        guard case .array(let servers)? = value, let first = servers.first, case .object(let server) = first, let url = Self.text(server["url"]) else { return }
        serverNote = "the document's server is \(url): the service's environment says where requests go (baseURL and apiVersion)"
        if servers.count > 1 {
            unsupported.append(Unsupported(place: "servers", problem: "\(servers.count) servers: one service environment each, in the service's config"))
        }
        if server["variables"] != nil {
            unsupported.append(Unsupported(place: "servers[0].variables", problem: "server variables: write the URL into the environment, or read it with ${NAME}"))
        }
    }

    /// A `$ref` to `#/components/…` followed; any other reference noted.
    private mutating func resolve(_ value: JSONValue, components: JSONValue?, at place: String) -> JSONValue? {
        guard case .object(let object) = value, case .string(let reference)? = object["$ref"] else { return value }
        let prefix = "#/components/"
        guard reference.hasPrefix(prefix) else {
            unsupported.append(Unsupported(place: place, problem: "the reference \(reference) is not to this document's components"))
            return nil
        }
        var current = components
        for part in reference.dropFirst(prefix.count).split(separator: "/") {
            let key = part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            guard case .object(let members)? = current, let next = members[key] else {
                unsupported.append(Unsupported(place: place, problem: "the reference \(reference) names nothing in the document"))
                return nil
            }
            current = next
        }
        return current
    }

    private static func text(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value, !text.isEmpty { return text }
        return nil
    }

    private static func scalar(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .integer(let number): String(number)
        case .number(let number): String(number)
        case .bool(let flag): String(flag)
        default: nil
        }
    }

    /// `get.goods.id` for `GET /goods/{id}`; `post.v1.items_batchGet` for `POST /v1/items:batchGet`.
    private static func derivedName(method: String, path: String) -> String {
        let words = path.split(separator: "/").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "{}")) }
        return defineName(from: ([method] + words).joined(separator: "."))
    }

    /// `text` as a define name: each character a define name cannot hold becomes `_`, and empty
    /// parts between dots go.
    static func defineName(from text: String) -> String {
        let kept = String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-" || scalar == "." ? scalar : "_"
        }))
        let parts = kept.split(separator: ".").map(String.init)
        let name = parts.isEmpty ? "operation" : parts.joined(separator: ".")
        return name == "DEFAULT" ? "DEFAULT_" : name
    }

    /// The define file's text: one define a line, in name order, `DEFAULT` first.
    ///
    /// - Throws: ``CommandFailure`` when a define holds what JSON cannot (a value of the
    ///   document that is not finite).
    func fileText() throws -> String {
        var lines: [String] = []
        for name in ["DEFAULT"] + defines.keys.filter({ $0 != "DEFAULT" }).sorted() {
            guard JSONSerialization.isValidJSONObject(defines[name]!) else {
                throw CommandFailure(.configuration, "the define \(name) holds a value JSON cannot write")
            }
            let value = try JSONSerialization.data(withJSONObject: defines[name]!, options: [.sortedKeys, .withoutEscapingSlashes])
            let key = try JSONSerialization.data(withJSONObject: name, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            lines.append("  \(String(decoding: key, as: UTF8.self)): \(String(decoding: value, as: UTF8.self))")
        }
        return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
    }
}
#endif
