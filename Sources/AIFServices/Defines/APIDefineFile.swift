public import Foundation

/// Reads the defines of one `*.apis.json` file.
///
/// ```json
/// {
///   "DEFAULT": {"service": "shop", "headers": {"Accept": "application/json"}},
///   "goods.detail": {"path": "goods/{id}", "cache": {"lifetimeSeconds": 60}},
///   "goods.list": {"path": "goods", "parameters": {"page_size": 50}, "response": {"dataField": "items", "shape": "list"}},
///   "@orders": {
///     "DEFAULT": {"pathPrefix": "orders", "authorization": true},
///     "place": {"path": "", "method": "POST", "retry": false},
///     "detail": {"path": "{id}"}
///   }
/// }
/// ```
///
/// A `DEFAULT` block gives every define beside it (and in groups below it) its values; a define
/// replaces them key by key, except `headers`, `parameters` and `placement`, which are merged
/// over the default's, and `pathPrefix`, which a group's `DEFAULT` joins to the outer one's. A member whose
/// name starts with `@` is a group: its defines are named `group.define`. The keys of a define or
/// a `DEFAULT`: `service`, `method`, `path`, `pathPrefix`, `headers`, `parameters`, `placement`
/// (where parameters go, by name: `path`, `query`, `header` or `body`, or an object with `in`,
/// `name` — a header's name — and `arrays`), `authorization`, `response` (`dataField`, `shape`: `any`, `object` or `list`), `cache`
/// (`lifetimeSeconds`, `staleWhileRevalidateSeconds`, `followsCacheControl`), `retry` and `paging`
/// (as a service's), `timeoutSeconds`, `summary`, and `graphql` for a define that runs a GraphQL
/// operation: `{"query": DOCUMENT}` or `{"mutation": DOCUMENT}`, with `operationName`,
/// `connectionAt` (a query's) and `serverHonoursIdempotencyKeys` (a mutation's) — its path is
/// `graphql` and its method POST unless given, its content is read from `data`. Values may read
/// environment variables as `${NAME}` (`$${` is the text `${`).
enum APIDefineFile {
    /// The keys a define or a `DEFAULT` may have.
    static let keys = [
        "authorization", "cache", "graphql", "headers", "method", "paging", "parameters", "path", "pathPrefix", "placement", "response", "retry", "service",
        "summary", "timeoutSeconds",
    ]

    /// A define as a file gives it: the key path it is at, and the key path that named its
    /// service (its own `service`, or a `DEFAULT`'s), for errors found after reading.
    struct Read {
        var define: APIDefine
        var keyPath: String
        var serviceKeyPath: String
    }

    /// The defines of a file, and the file's document, which locates the key paths of later
    /// errors.
    struct Contents {
        var defines: [Read]
        var document: APIDefine.Document
    }

    /// The defines of a file, read from disk in its format (by its name's ending).
    static func read(_ file: URL, environment: [String: String], formats: [any APIDefine.Format]) throws(ServiceRegistry.ConfigurationError) -> Contents {
        guard let format = formats.format(of: file) else {
            let suffixes = ([".apis.json"] + formats.flatMap(\.fileSuffixes)).joined(separator: ", ")
            let yaml = file.lastPathComponent.hasSuffix(".yaml") || file.lastPathComponent.hasSuffix(".yml")
            throw ServiceRegistry.ConfigurationError(
                file: file.path, key: nil,
                problem: "is not a define file this registry reads (\(suffixes))"
                    + (yaml ? "; YAML defines need the YAML trait: pass formats: [YAMLDefineFormat()] from AIFNetworkingYAML" : ""))
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ServiceRegistry.ConfigurationError(file: file.path, key: nil, problem: "cannot be read: \(error.localizedDescription)")
        }
        let document = try format.read(data, file: file.path)
        return Contents(defines: try parse(document, file: file.path, environment: environment), document: document)
    }

    /// The defines of a file's JSON bytes.
    static func parse(_ data: Data, file: String, environment: [String: String]) throws(ServiceRegistry.ConfigurationError) -> [Read] {
        try parse(APIDefine.JSONFormat().read(data, file: file), file: file, environment: environment)
    }

    /// Checks that each define names one of `services`; the first that does not is an error at
    /// the key that named its service, located in `document` when it can be.
    static func checkServices(_ defines: [Read], are services: Set<ServiceName>, in document: APIDefine.Document?) throws(ServiceRegistry.ConfigurationError) {
        for read in defines where !services.contains(read.define.service) {
            let known = services.isEmpty ? "none" : services.sorted().map(\.rawValue).joined(separator: ", ")
            let place = document?.place(of: read.serviceKeyPath)
            throw ServiceRegistry.ConfigurationError(
                file: read.define.file, key: read.serviceKeyPath,
                problem: "names the service \"\(read.define.service)\" (for \(read.define.name)), which is not registered (registered: \(known)); register the services before the APIs",
                line: place?.line, column: place?.column)
        }
    }

    /// The defines of a file read in its format.
    ///
    /// - Parameters:
    ///   - document: The file's content and places.
    ///   - file: Its path, for errors.
    ///   - environment: Where `${NAME}` references are looked up.
    /// - Returns: The defines, each with its key path in the file (`@orders.place`), for later
    ///   errors.
    /// - Throws: ``ServiceRegistry/ConfigurationError`` naming the file and the key path of what is wrong, and its
    ///   line and column when the format tells them.
    static func parse(_ document: APIDefine.Document, file: String, environment: [String: String]) throws(ServiceRegistry.ConfigurationError) -> [Read] {
        guard case .object(let members) = document.root else {
            let place = document.places[""]
            throw ServiceRegistry.ConfigurationError(
                file: file, key: nil, problem: "must be an object of defines", line: place?.line ?? 1, column: place?.column ?? 1)
        }
        var reader = Reader(config: ConfigReader(file: file, environment: environment), places: { document.places })
        try reader.readGroup(members, prefix: "", at: "", inheriting: Values())
        return reader.defines
    }

    /// The values a define is made of, each as given (or inherited).
    struct Values {
        var service: String?
        /// Where the service was named.
        var serviceKeyPath: String?
        var method: String?
        var path: String?
        /// Where the path was given.
        var pathKeyPath: String?
        var pathPrefix: String?
        var headers: [String: String] = [:]
        var parameters: Parameters = [:]
        var placements: [String: Parameters.Placement] = [:]
        /// Where each placement was given, for an error found once the path is known.
        var placementKeyPaths: [String: String] = [:]
        var authorization: Bool?
        var response: APIDefine.Response?
        var cache: APIDefine.Cache??
        var retry: RetryPolicy?
        var paging: PagingRule?
        var timeout: Duration?
        var summary: String?
        var graphQL: APIDefine.GraphQL?
        /// Where the operation was given.
        var graphQLKeyPath: String?
    }

    /// Walks a file: groups, `DEFAULT`s and defines, in name order.
    struct Reader {
        let config: ConfigReader
        /// Where the keys stand, asked for only when there is an error to locate.
        let places: () -> [String: APIDefine.Document.Place]
        var defines: [Read] = []
        var origins: [String: String] = [:]

        init(config: ConfigReader, places: @escaping () -> [String: APIDefine.Document.Place]) {
            self.config = config
            self.places = places
        }

        /// Reads the members of the file or of a group.
        mutating func readGroup(_ members: [String: JSONValue], prefix: String, at path: String, inheriting outer: Values) throws(ServiceRegistry.ConfigurationError) {
            var defaults = outer
            if let block = members["DEFAULT"] {
                defaults = try values(block, at: key(path, "DEFAULT"), over: outer, joiningPrefix: true)
            }
            for (name, value) in members.sorted(by: { $0.key < $1.key }) where name != "DEFAULT" {
                let at = key(path, name)
                if name.hasPrefix("@") {
                    let group = String(name.dropFirst())
                    guard isName(group) else { throw problem(at, "is not a group name: after the @, letters, digits, _ and - separated by dots") }
                    guard case .object(let inner) = value else { throw problem(at, "must be an object (a group of defines)") }
                    try readGroup(inner, prefix: prefix + group + ".", at: at, inheriting: defaults)
                } else {
                    guard isName(name) else {
                        if name.isEmpty { throw problem(at, "is a define without a name: letters, digits, _ and - separated by dots") }
                        throw problem(at, "is not a define name: letters, digits, _ and - separated by dots (a group's name starts with @)")
                    }
                    // The group is the @groups it is in, not the dots of its own name.
                    let group = prefix.isEmpty ? nil : String(prefix.dropLast())
                    try add(prefix + name, group: group, values(value, at: at, over: defaults, joiningPrefix: false), at: at)
                }
            }
        }

        private mutating func add(_ name: String, group: String?, _ values: Values, at path: String) throws(ServiceRegistry.ConfigurationError) {
            if let earlier = origins[name] {
                throw problem(path, "defines \(name), which \(earlier) defines too")
            }
            origins[name] = path
            guard let service = values.service, !service.isEmpty else {
                throw problem(path, "names no service: give a \"service\" here or in a DEFAULT above it")
            }
            guard let given = values.path ?? (values.graphQL == nil ? nil : "graphql") else {
                throw problem(path, "has no path: give a \"path\" (\"\" for the prefix alone)")
            }
            let method = HTTPMethod(rawValue: (values.method ?? (values.graphQL == nil ? "GET" : "POST")).uppercased())
            if let operation = values.graphQL {
                let at = values.graphQLKeyPath ?? key(path, "graphql")
                if operation.kind == .mutation && method != .post {
                    throw problem(at, "is a mutation, which is sent with POST, and \(name) has the method \(method)")
                }
                if values.response?.dataField != nil {
                    throw problem(at, "reads the content from data: give \"connectionAt\" inside \"graphql\" instead of a response dataField")
                }
                if let placed = values.placements.keys.sorted().first {
                    throw problem(
                        values.placementKeyPaths[placed] ?? at, "places \(placed), and the parameters of \(name), a GraphQL operation, are its variables: give no placement")
                }
                if operation.kind == .mutation && (values.cache ?? nil) != nil {
                    throw problem(at, "is a mutation, whose answers are not cached: give no \"cache\"")
                }
            }
            let fullPath = Self.join(values.pathPrefix, given)
            if let wrong = APIDefine.placeholderProblem(in: fullPath) {
                throw problem(values.pathKeyPath ?? key(path, "path"), "makes the path \(fullPath), which \(wrong)")
            }
            for (parameter, placement) in values.placements.sorted(by: { $0.key < $1.key }) where placement.location == .path {
                guard fullPath.contains("{\(parameter)}") else {
                    throw problem(values.placementKeyPaths[parameter] ?? path, "places \(parameter) in the path, and the path of \(name) (\(fullPath)) has no {\(parameter)}")
                }
            }
            var headers = HTTPHeaders()
            for (field, value) in values.headers.sorted(by: { $0.key < $1.key }) { headers.set(name: field, value: value) }
            var define = APIDefine(
                name: name, group: group, service: ServiceName(rawValue: service), method: method,
                path: fullPath, headers: headers, parameters: values.parameters, parameterPlacements: values.placements,
                needsAuthorization: values.authorization ?? true, response: values.response ?? APIDefine.Response(), cache: values.cache ?? nil,
                retryPolicy: values.retry, timeout: values.timeout, paging: values.paging, summary: values.summary, file: config.file)
            define.graphQL = values.graphQL
            defines.append(Read(define: define, keyPath: path, serviceKeyPath: values.serviceKeyPath ?? key(path, "service")))
        }

        /// A define's or a `DEFAULT`'s values over the ones it inherits.
        private func values(_ value: JSONValue, at path: String, over inherited: Values, joiningPrefix: Bool) throws(ServiceRegistry.ConfigurationError) -> Values {
            guard case .object(let members) = value else { throw problem(path, "must be an object") }
            if let unknown = members.keys.sorted().first(where: { !APIDefineFile.keys.contains($0) }) {
                throw problem(key(path, unknown), "is not a known key; expected one of: \(APIDefineFile.keys.joined(separator: ", "))")
            }
            var values = inherited
            if let text = try string(members["service"], at: key(path, "service")) {
                values.service = text
                values.serviceKeyPath = key(path, "service")
            }
            if let text = try string(members["method"], at: key(path, "method")) {
                guard APIDefine.isToken(text) else { throw problem(key(path, "method"), "must be a method name such as \"GET\" (letters, digits and !#$%&'*+-.^_`|~)") }
                values.method = text
            }
            if let text = try string(members["path"], at: key(path, "path")) {
                values.path = text
                values.pathKeyPath = key(path, "path")
            }
            if let text = try string(members["pathPrefix"], at: key(path, "pathPrefix")) {
                values.pathPrefix = joiningPrefix ? Self.join(inherited.pathPrefix, text) : text
            }
            if let headers = members["headers"] {
                guard case .object(let fields) = headers else { throw problem(key(path, "headers"), "must be an object of header values") }
                for (field, value) in fields.sorted(by: { $0.key < $1.key }) {
                    guard APIDefine.isToken(field) else {
                        throw problem(key(key(path, "headers"), field), "is not a header name (letters, digits and !#$%&'*+-.^_`|~, no spaces)")
                    }
                    guard let text = try string(value, at: key(key(path, "headers"), field)) else { continue }
                    guard !text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0x00 }) else {
                        throw problem(key(key(path, "headers"), field), "has a line break or a NUL in its value")
                    }
                    values.headers[field] = text
                }
            }
            if let parameters = members["parameters"] {
                guard case .object(let given) = parameters else { throw problem(key(path, "parameters"), "must be an object of parameters") }
                for (name, value) in given {
                    let at = key(key(path, "parameters"), name)
                    do throws(ServiceRegistry.ConfigurationError) {
                        values.parameters[name] = try config.parameter(value, at: at)
                    } catch {
                        throw problem(error.key ?? at, error.problem)
                    }
                }
            }
            if let placement = members["placement"] {
                let at = key(path, "placement")
                guard case .object(let given) = placement else {
                    throw problem(at, "must be an object: where each parameter goes, by its name (\"query\", \"header\", …)")
                }
                for (name, value) in given.sorted(by: { $0.key < $1.key }) {
                    switch Parameters.Placement.read(value) {
                    case .success(let read):
                        values.placements[name] = read
                        values.placementKeyPaths[name] = key(at, name)
                    case .failure(let failure):
                        throw problem(failure.member.map { key(key(at, name), $0) } ?? key(at, name), failure.problem)
                    }
                }
            }
            if let flag = members["authorization"] {
                guard case .bool(let needed) = flag else { throw problem(key(path, "authorization"), "must be true or false") }
                values.authorization = needed
            }
            if let response = members["response"] { values.response = try self.response(response, at: key(path, "response")) }
            if let cache = members["cache"] { values.cache = .some(try self.cache(cache, at: key(path, "cache"))) }
            if let retry = members["retry"] { values.retry = try self.retry(retry, at: key(path, "retry")) }
            if let paging = members["paging"] {
                do throws(ServiceRegistry.ConfigurationError) {
                    values.paging = try PagingRule.read(paging, at: key(path, "paging"), reader: config)
                } catch {
                    throw problem(error.key ?? key(path, "paging"), error.problem)
                }
            }
            if let seconds = members["timeoutSeconds"] {
                guard let number = seconds.doubleValue, number > 0, number <= 3600 else {
                    throw problem(key(path, "timeoutSeconds"), "must be a number of seconds above 0 and at most 3600")
                }
                values.timeout = .milliseconds(Int64(number * 1000))
            }
            if let text = try string(members["summary"], at: key(path, "summary")) { values.summary = text }
            if let operation = members["graphql"] {
                guard !joiningPrefix else { throw problem(key(path, "graphql"), "cannot be a DEFAULT's: give each define its own operation") }
                values.graphQL = try graphQL(operation, at: key(path, "graphql"))
                values.graphQLKeyPath = key(path, "graphql")
            }
            return values
        }

        /// `{"query": …}` or `{"mutation": …}`, and the operation's companions.
        private func graphQL(_ value: JSONValue, at path: String) throws(ServiceRegistry.ConfigurationError) -> APIDefine.GraphQL {
            guard case .object(let members) = value else { throw problem(path, "must be an object: {\"query\": DOCUMENT} or {\"mutation\": DOCUMENT}") }
            let known = ["connectionAt", "mutation", "operationName", "query", "serverHonoursIdempotencyKeys"]
            if let unknown = members.keys.sorted().first(where: { !known.contains($0) }) {
                throw problem(key(path, unknown), "is not a known key; expected one of: \(known.joined(separator: ", "))")
            }
            let query = try string(members["query"], at: key(path, "query"))
            let mutation = try string(members["mutation"], at: key(path, "mutation"))
            let kind: APIDefine.GraphQL.Kind
            let document: String
            switch (query, mutation) {
            case (let text?, nil): (kind, document) = (.query, text)
            case (nil, let text?): (kind, document) = (.mutation, text)
            case (nil, nil): throw problem(path, "has no document: give \"query\" or \"mutation\"")
            case (_?, _?): throw problem(key(path, "mutation"), "cannot stand beside \"query\": a define runs one operation")
            }
            guard !document.allSatisfy(\.isWhitespace) else { throw problem(key(path, kind.rawValue), "is empty") }
            var operation = APIDefine.GraphQL(kind, document: document, operationName: try string(members["operationName"], at: key(path, "operationName")))
            if let connection = try string(members["connectionAt"], at: key(path, "connectionAt")) {
                guard kind == .query else { throw problem(key(path, "connectionAt"), "is a query's: a mutation's content is its data") }
                guard !connection.isEmpty, !connection.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
                    throw problem(key(path, "connectionAt"), "must be fields separated by dots (viewer.repositories)")
                }
                operation.connectionAt = connection
            }
            if let honours = members["serverHonoursIdempotencyKeys"] {
                guard case .bool(let flag) = honours else { throw problem(key(path, "serverHonoursIdempotencyKeys"), "must be true or false") }
                guard kind == .mutation || !flag else { throw problem(key(path, "serverHonoursIdempotencyKeys"), "is a mutation's: a query needs no key") }
                operation.serverHonoursIdempotencyKeys = flag
            }
            return operation
        }

        private func response(_ value: JSONValue, at path: String) throws(ServiceRegistry.ConfigurationError) -> APIDefine.Response {
            guard case .object(let members) = value else { throw problem(path, "must be an object (dataField, shape)") }
            if let unknown = members.keys.sorted().first(where: { !["dataField", "shape"].contains($0) }) {
                throw problem(key(path, unknown), "is not a known key; expected one of: dataField, shape")
            }
            var response = APIDefine.Response()
            response.dataField = try string(members["dataField"], at: key(path, "dataField"))
            if let text = try string(members["shape"], at: key(path, "shape")) {
                guard let shape = APIDefine.Response.Shape(rawValue: text) else {
                    throw problem(key(path, "shape"), "must be one of: \(APIDefine.Response.Shape.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                response.shape = shape
            }
            return response
        }

        /// `false` for none, or the lifetime and its companions.
        private func cache(_ value: JSONValue, at path: String) throws(ServiceRegistry.ConfigurationError) -> APIDefine.Cache? {
            if case .bool(false) = value { return nil }
            guard case .object(let members) = value else { throw problem(path, "must be false or an object (lifetimeSeconds, …)") }
            let known = ["followsCacheControl", "lifetimeSeconds", "staleWhileRevalidateSeconds"]
            if let unknown = members.keys.sorted().first(where: { !known.contains($0) }) {
                throw problem(key(path, unknown), "is not a known key; expected one of: \(known.joined(separator: ", "))")
            }
            guard let lifetime = members["lifetimeSeconds"] else { throw problem(key(path, "lifetimeSeconds"), "is missing") }
            var cache = APIDefine.Cache(lifetime: try seconds(lifetime, at: key(path, "lifetimeSeconds")))
            if let stale = members["staleWhileRevalidateSeconds"] { cache.staleWhileRevalidate = try seconds(stale, at: key(path, "staleWhileRevalidateSeconds")) }
            if let follows = members["followsCacheControl"] {
                guard case .bool(let flag) = follows else { throw problem(key(path, "followsCacheControl"), "must be true or false") }
                cache.followsCacheControl = flag
            }
            return cache
        }

        /// As a service's `retry` key reads it, its errors named under this define.
        private func retry(_ value: JSONValue, at path: String) throws(ServiceRegistry.ConfigurationError) -> RetryPolicy {
            do {
                let retry = try FastJSONDecoder().decode(ServiceFile.Retry.self, from: JSONEncoder().encode(value))
                return try ServiceRegistry.ConfiguredService.retryPolicy(retry, reader: config)
            } catch let error as ServiceRegistry.ConfigurationError {
                let inner = error.key.map { $0.hasPrefix("retry") ? String($0.dropFirst("retry".count)) : "." + $0 } ?? ""
                throw problem(path + inner, error.problem)
            } catch let error as DecodingError {
                let told = ServiceRegistry.ConfigurationError(file: config.file, error)
                throw problem(told.key.map { "\(path).\($0)" } ?? path, told.problem)
            } catch {
                throw problem(path, "cannot be read: \(error)")
            }
        }

        private func seconds(_ value: JSONValue, at path: String) throws(ServiceRegistry.ConfigurationError) -> Duration {
            guard let number = value.doubleValue, number >= 0, number <= 31_536_000 else {
                throw problem(path, "must be a number of seconds from 0 to a year")
            }
            return .milliseconds(Int64(number * 1000))
        }

        private func string(_ value: JSONValue?, at path: String) throws(ServiceRegistry.ConfigurationError) -> String? {
            guard let value else { return nil }
            guard case .string(let text) = value else { throw problem(path, "must be a string") }
            do throws(ServiceRegistry.ConfigurationError) {
                return try config.substitute(text, at: path)
            } catch {
                throw problem(path, error.problem)
            }
        }

        /// An error at `path`, located at the key or, when the format told nothing of it, at the
        /// nearest member above it.
        private func problem(_ path: String, _ text: String) -> ServiceRegistry.ConfigurationError {
            let place = APIDefine.Document(root: .null, places: places()).place(of: path) ?? places()[""]
            return ServiceRegistry.ConfigurationError(file: config.file, key: path.isEmpty ? nil : path, problem: text, line: place?.line, column: place?.column)
        }

        /// The key path of `member` below `path`; a member without a name is `""` there, as
        /// the formats record its place.
        private func key(_ path: String, _ member: String) -> String {
            APIDefine.Document.keyPath(path, member)
        }


        private func isName(_ name: String) -> Bool {
            APIDefine.isDefineName(name)
        }

        /// `prefix/path`, with one slash between, and either part alone when the other is empty.
        static func join(_ prefix: String?, _ path: String) -> String {
            guard let prefix, !prefix.isEmpty else { return path }
            guard !path.isEmpty else { return prefix }
            let head = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
            return head + "/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path)
        }
    }
}

extension APIDefine {
    /// The defines of one `*.apis.json` file, read without registering them — for listings and
    /// tools; ``ServiceRegistry/registerAPIs(inDirectory:environment:formats:)`` registers them.
    ///
    /// - Parameters:
    ///   - file: The file.
    ///   - environment: Where `${NAME}` references are looked up.
    ///   - formats: Formats besides JSON (YAML: `YAMLDefineFormat` of `AIFNetworkingYAML`).
    ///   - services: When given, the services a define may name: one naming another is an error.
    /// - Returns: The defines, in name order.
    /// - Throws: ``ServiceRegistry/ConfigurationError`` naming the file, the key path of what is wrong, and its
    ///   line and column when the format tells them.
    public static func defines(
        in file: URL, environment: [String: String] = ProcessInfo.processInfo.environment, formats: [any APIDefine.Format] = [],
        services: Set<ServiceName>? = nil
    ) throws(ServiceRegistry.ConfigurationError) -> [APIDefine] {
        let contents = try APIDefineFile.read(file, environment: environment, formats: formats)
        if let services { try APIDefineFile.checkServices(contents.defines, are: services, in: contents.document) }
        return contents.defines.map(\.define).sorted { $0.name < $1.name }
    }
}

extension APIDefine {
    /// Whether `text` is an HTTP token (RFC 9110 §5.6.2): what a method or a header name is.
    package static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// What is wrong with the placeholders of `path` (`{id`, `{}`, `id}`), or `nil`.
    package static func placeholderProblem(in path: String) -> String? {
        var open: String.Index?
        for index in path.indices {
            switch path[index] {
            case "{":
                if open != nil { return "opens a placeholder inside another" }
                open = index
            case "}":
                guard let start = open else { return "closes a placeholder it never opened" }
                if path.index(after: start) == index { return "has an empty placeholder {}" }
                if path[start..<index].contains("/") { return "has a placeholder across a /" }
                open = nil
            default:
                continue
            }
        }
        return open == nil ? nil : "opens a placeholder it never closes"
    }

    /// Whether `name` can name a define: letters, digits, `_` and `-`, in parts separated by dots.
    package static func isDefineName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { part in
            !part.isEmpty && part.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" }
        }
    }
}
