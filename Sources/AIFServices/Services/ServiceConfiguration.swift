public import Foundation

extension ServiceRegistry {
    /// A service defined in a JSON file (the files under `Configs/`).
    ///
    /// ```json
    /// {
    ///   "name": "shop",
    ///   "defaultEnvironment": "online",
    ///   "bodyEncoding": "json",
    ///   "arrayEncoding": "brackets",
    ///   "timeoutSeconds": 30,
    ///   "signing": { "scheme": "aif-hmac", "placement": "query" },
    ///   "commonHeaders": { "X-Client": "shop-cli" },
    ///   "commonParameters": { "app": "shop" },
    ///   "decoding": { "keys": "snakeCase", "dates": "iso8601" },
    ///   "applicationErrors": { "codeField": "code", "messageField": "message", "successCodes": [0] },
    ///   "errorBody": { "messageField": "error.message", "codeField": "error.code" },
    ///   "environments": {
    ///     "online": { "baseURL": "https://api.shop.example", "apiVersion": "v1",
    ///                 "publicKey": "${SHOP_PUBLIC_KEY}", "privateKey": "${SHOP_PRIVATE_KEY}",
    ///                 "signsAllParameters": true }
    ///   }
    /// }
    /// ```
    ///
    /// Any string may use `${NAME}` to read an environment variable (`$${` is the text `${`); a private key must (a file
    /// never holds a secret in clear). `signing.scheme` is `aif-hmac` (default), `rfc9421`, `md5`
    /// or `none`; `signing.placement` is `query` (default) or `headers` for AIF-HMAC.
    /// `decoding.keys` is `default` or `snakeCase`, `decoding.dates` is `deferred` (default),
    /// `iso8601`, `secondsSince1970`, `millisecondsSince1970` or `formatted` with the pattern in
    /// `decoding.dateFormat`; request bodies made from values are encoded to match. `arrayEncoding`
    /// is `brackets` (default), `indexed` (`items[0][price]`, as Rack and Stripe read arrays of
    /// objects), `repeated` or `comma`. `errorBody` names the members of a failed
    /// status's body that hold the server's message and code (see ``ErrorBodyRule``; the common
    /// ones without it). `applicationErrors` makes a
    /// response whose JSON body carries another code than a success code fail as a service veto
    /// (see ``ServiceVeto/Rule``): `codeField`, `messageField` and `successCodes` (strings, integers,
    /// booleans); or `successFlag` (`"ok"`), `errorField` (`"error"`) and `messageField` for a body
    /// that says `true` or `false`; `warningsField` where a success lists warnings. `retry` sets the ``RetryPolicy``: `false` for none, or an
    /// object whose keys override the defaults — `maxRetries`, `statusCodes`, `errors`
    /// (`connectionRefused`, `connectionDropped`, `responseLost`, `connectTimeout`, `totalTimeout`, `stalled`,
    /// `hostUnreachable`, `nameResolutionFailed`), `methods`, `retryUnprocessedRequests` (`true`: a
    /// 429, or a 503 that says when to come back, retried for any method), `idempotencyKeyHeader`,
    /// `generateIdempotencyKeys` (`true`: a key of its own for each POST or PATCH load),
    /// `retryAdviceHeader` (`Stripe-Should-Retry`), `baseDelaySeconds`, `maxDelaySeconds`,
    /// `maxTotalWaitSeconds` (the load's wait budget). `errorPolicies` maps application codes (`codes`) and
    /// HTTP statuses (`statuses`) to `surface`, `retry`, `refreshCredentials`, `correctClock` or `handler:NAME`
    /// (see ``ErrorPolicies/Action``). `circuitBreaker` turns on circuit breaking for each
    /// environment (see ``CircuitBreaker``): `true` for the defaults, or an object changing some of
    /// them — `failuresToOpen`, `coolDownSeconds`, `probes`, `counted` (`timeout`, `connection`,
    /// `serverError`) and `serverErrorStatuses`; an environment's own `circuitBreaker` replaces the
    /// service's for that environment. `cacheVersion` (a whole number, 0 by default) is the
    /// ``Service/cacheVersion``. `paging` says how its listings are paged (see ``PagingRule``).
    ///
    /// An environment can say how its requests reach the server: `unixSocket` (a socket's path),
    /// `connectTo` (`{ "api.shop.example:443": "10.0.4.12:8443" }`: a host name, with or without
    /// its port, connected to another address, TLS still checking the name) and
    /// `clientCertificate` (`{ "certificate": "certs/client.pem", "key": "certs/client.key",
    /// "passphrase": "${SHOP_KEY_PASSPHRASE}" }`: PEM files relative to the config file, or
    /// `${VARIABLE}`s holding the PEM; a passphrase only as a variable) and `trust` (`{
    /// "certificateAuthorities": "certs/ca.pem", "pinnedPublicKeys": ["sha256//BASE64"] }`: a private
    /// CA instead of the system's store, a file or a `${VARIABLE}` holding the PEM, and public-key
    /// pins). See ``/AIFTransport/HTTPRequest/Connection``.
    ///
    /// An environment can carry a credential of its own, `authorization` — a test key and a live
    /// key for one URL, switched with the environment: `{"bearer": "${PAY_TEST_KEY}"}`,
    /// `{"basic": {"user": "${PAY_LIVE_KEY}"}}` (a `password` too, if the scheme wants one) or
    /// `{"parameter": {"name": "api_key", "value": "${KEY}"}}`. The secret is always an environment
    /// variable, never written in the file; a variable that is not set fails the loads of that
    /// environment, saying which, and leaves the others usable. See
    /// ``ServiceEnvironment/authenticator``.
    public struct ConfiguredService: Service {
        /// The longest `timeoutSeconds` a config file may give: a week.
        static let maxTimeoutSeconds: Double = 604_800

        /// The name.
        public let name: ServiceName
        /// The environments.
        public let environments: [ServiceEnvironment.Name: ServiceEnvironment]
        /// The default environment.
        public let defaultEnvironment: ServiceEnvironment.Name
        /// The body encoding.
        public let bodyEncoding: Parameters.BodyEncoding
        /// The array encoding.
        public let arrayEncoding: Parameters.ArrayEncoding
        /// The timeouts.
        public let timeouts: HTTPRequest.Timeouts?
        /// The signer.
        public let signer: (any RequestSigner)?
        /// The decoder of its responses, from the `decoding` key (`nil` without one).
        public let decoder: (any ContentDecoder)?
        /// The rule for application-level errors, from the `applicationErrors` key.
        public let applicationErrors: ServiceVeto.Rule?
        /// What a failed status's body says, from the `errorBody` key (``ErrorBodyRule/common``
        /// without one).
        public let errorBody: ErrorBodyRule
        /// Where the content sits in wrapped bodies, from the `envelope` key.
        public let envelope: ResponseEnvelope?
        /// When failed loads are sent again, from the `retry` key (``RetryPolicy/standard`` without
        /// one).
        public let retryPolicy: RetryPolicy
        /// What loads do on given application codes and statuses, from the `errorPolicies` key.
        public let errorPolicies: ErrorPolicies?
        /// When each environment's circuit opens, from the `circuitBreaker` key (none without one).
        public let circuitBreaker: CircuitBreaker.Policy?
        /// The cache version of the service's responses, from the `cacheVersion` key (0 without
        /// one).
        public let cacheVersion: Int
        /// How its listings are paged, from the `paging` key (see ``PagingRule``).
        public let paging: PagingRule?
        /// The file it was read from.
        public let file: String
        private let headers: HTTPHeaders
        private let parameters: Parameters

        /// The configured common headers.
        public func commonHeaders() -> HTTPHeaders { headers }
        /// The configured common parameters.
        public func commonParameters() -> Parameters { parameters }

        /// Reads a service definition.
        ///
        /// - Parameters:
        ///   - file: The JSON file.
        ///   - environment: Where `${NAME}` references are looked up; the process's by default.
        /// - Returns: The service.
        /// - Throws: ``ServiceRegistry/ConfigurationError`` naming the file and the key that is wrong.
        public static func load(
            from file: URL,
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) throws(ServiceRegistry.ConfigurationError) -> ServiceRegistry.ConfiguredService {
            let data: Data
            do {
                data = try Data(contentsOf: file)
            } catch {
                throw ServiceRegistry.ConfigurationError(file: file.path, key: nil, problem: "cannot be read: \(error.localizedDescription)")
            }
            return try parse(data, file: file.path, environment: environment)
        }

        /// Reads a service definition from JSON bytes; `file` names them in errors.
        public static func parse(_ data: Data, file: String, environment: [String: String]) throws(ServiceRegistry.ConfigurationError) -> ServiceRegistry.ConfiguredService {
            let definition = try ServiceFile.decode(data, file: file)
            let reader = ConfigReader(file: file, environment: environment)
            let environments = try environments(definition.environments, reader: reader)
            let defaultEnvironment = ServiceEnvironment.Name(rawValue: try reader.substitute(definition.defaultEnvironment ?? "online", at: "defaultEnvironment"))
            guard environments[defaultEnvironment] != nil else {
                throw ServiceRegistry.ConfigurationError(
                    file: file, key: "defaultEnvironment",
                    problem: "\"\(defaultEnvironment)\" is not one of the environments (\(environments.keys.sorted().map(\.rawValue).joined(separator: ", ")))")
            }
            let (bodyEncoding, arrayEncoding) = try encodings(definition, reader: reader)
            if let version = definition.cacheVersion, version < 0 {
                throw ServiceRegistry.ConfigurationError(file: file, key: "cacheVersion", problem: "must be a whole number, 0 or more")
            }
            return ServiceRegistry.ConfiguredService(
                name: ServiceName(rawValue: try reader.substitute(definition.name, at: "name")), environments: environments,
                defaultEnvironment: defaultEnvironment, bodyEncoding: bodyEncoding, arrayEncoding: arrayEncoding,
                timeouts: try timeouts(definition.timeoutSeconds, reader: reader), signer: try signer(definition.signing, reader: reader),
                decoder: try decoder(definition.decoding, reader: reader), applicationErrors: try applicationErrors(definition.applicationErrors, reader: reader),
                errorBody: try errorBody(definition.errorBody, reader: reader),
                envelope: try envelope(definition.envelope, reader: reader), retryPolicy: try retryPolicy(definition.retry, reader: reader),
                errorPolicies: try errorPolicies(definition.errorPolicies, reader: reader),
                circuitBreaker: try circuitBreaker(definition.circuitBreaker, at: "circuitBreaker", reader: reader), cacheVersion: definition.cacheVersion ?? 0,
                paging: try definition.paging.map { value throws(ServiceRegistry.ConfigurationError) in try PagingRule.read(value, at: "paging", reader: reader) }, file: file,
                headers: try commonHeaders(definition.commonHeaders, reader: reader), parameters: try commonParameters(definition.commonParameters, reader: reader))
        }

        private static func environments(
            _ entries: [String: ServiceFile.Environment]?, reader: ConfigReader
        ) throws(ServiceRegistry.ConfigurationError) -> [ServiceEnvironment.Name: ServiceEnvironment] {
            guard let entries else {
                throw ServiceRegistry.ConfigurationError(file: reader.file, key: "environments", problem: "is missing: a service needs at least one environment")
            }
            guard !entries.isEmpty else {
                throw ServiceRegistry.ConfigurationError(file: reader.file, key: "environments", problem: "is empty: a service needs at least one environment")
            }
            var environments: [ServiceEnvironment.Name: ServiceEnvironment] = [:]
            for (name, entry) in entries {
                environments[ServiceEnvironment.Name(rawValue: name)] = try environment(entry, at: "environments.\(name)", reader: reader)
            }
            return environments
        }

        private static func environment(_ entry: ServiceFile.Environment, at path: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> ServiceEnvironment {
            let file = reader.file
            let mock = try mockBehavior(entry, at: path, reader: reader)
            guard let baseText = try entry.baseURL.map({ text throws(ServiceRegistry.ConfigurationError) in try reader.substitute(text, at: "\(path).baseURL") }) ?? (mock == nil ? nil : "http://mock.invalid") else {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(path).baseURL", problem: "is missing")
            }
            guard let baseURL = URL(string: baseText), let scheme = baseURL.scheme?.lowercased(), scheme == "http" || scheme == "https", baseURL.host != nil else {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(path).baseURL", problem: "\"\(baseText)\" is not an http(s) URL")
            }
            if let rawPrivate = entry.privateKey, !rawPrivate.hasPrefix("${") || !rawPrivate.hasSuffix("}") {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(path).privateKey", problem: "must name an environment variable (write \"${NAME}\"): a config file never holds a secret in clear")
            }
            let publicKey = try entry.publicKey.map { text throws(ServiceRegistry.ConfigurationError) in try reader.substitute(text, at: "\(path).publicKey") }
            let privateKey = try entry.privateKey.map { text throws(ServiceRegistry.ConfigurationError) in try reader.substitute(text, at: "\(path).privateKey") }
            if (publicKey == nil) != (privateKey == nil) {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(path)", problem: "has one of publicKey and privateKey without the other")
            }
            return ServiceEnvironment(
                baseURL: baseURL,
                apiVersion: try reader.substitute(entry.apiVersion ?? "", at: "\(path).apiVersion"),
                credentials: publicKey.map { SigningContext.Credentials(publicKey: $0, privateKey: Secret(privateKey!)) },
                signsAllParameters: entry.signsAllParameters ?? true,
                mock: mock,
                connection: try connection(entry, at: path, reader: reader),
                authenticator: try authenticator(entry.authorization?.section, at: "\(path).authorization", reader: reader),
                circuitBreaker: try circuitBreaker(entry.circuitBreaker, at: "\(path).circuitBreaker", reader: reader)
            )
        }

        /// An environment's mock keys: `fixtures` (a directory, relative to the config file's),
        /// `latencyMs` (`[low, high]` or one number), `failureRate` (0 to 1), `seed`.
        private static func mockBehavior(_ entry: ServiceFile.Environment, at path: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> ServiceEnvironment.MockBehavior? {
            let file = reader.file
            guard let fixturesText = entry.fixtures else {
                let stray = [("latencyMs", entry.latencyMs != nil), ("failureRate", entry.failureRate != nil), ("seed", entry.seed != nil)].first { $0.1 }
                if let (key, _) = stray {
                    throw ServiceRegistry.ConfigurationError(file: file, key: "\(path).\(key)", problem: "belongs to a mock environment, which names its \"fixtures\"")
                }
                return nil
            }
            let fixtures = try reader.substitute(fixturesText, at: "\(path).fixtures")
            let directory = fixtures.hasPrefix("/")
                ? URL(fileURLWithPath: fixtures)
                : URL(fileURLWithPath: file).deletingLastPathComponent().appending(path: fixtures)
            // At most a day: longer is no latency to simulate, and far longer overflows a Duration.
            let longestLatency = 86_400_000
            func milliseconds(_ value: JSONValue) -> Duration? {
                switch value {
                case .integer(let number) where (0...longestLatency).contains(number): .milliseconds(number)
                case .number(let number) where number >= 0 && number <= Double(longestLatency): .milliseconds(number)
                default: nil
                }
            }
            var latency: ClosedRange<Duration> = .zero ... .zero
            if let value = entry.latencyMs {
                if case .array(let bounds) = value, bounds.count == 2, let low = milliseconds(bounds[0]), let high = milliseconds(bounds[1]), low <= high {
                    latency = low...high
                } else if let fixed = milliseconds(value) {
                    latency = fixed...fixed
                } else {
                    throw ServiceRegistry.ConfigurationError(file: file, key: "\(path).latencyMs", problem: "must be milliseconds from 0 to 86,400,000 (a day): a number, or [low, high] with low ≤ high")
                }
            }
            let failureRate = entry.failureRate ?? 0
            guard (0...1).contains(failureRate) else {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(path).failureRate", problem: "must be a number from 0 to 1")
            }
            if let seed = entry.seed, seed < 0 {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(path).seed", problem: "must be a whole number, 0 or more")
            }
            return ServiceEnvironment.MockBehavior(fixtures: directory, latency: latency, failureRate: failureRate, seed: entry.seed.map(UInt64.init))
        }

        private static func encodings(_ definition: ServiceFile, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> (Parameters.BodyEncoding, Parameters.ArrayEncoding) {
            let bodyEncoding: Parameters.BodyEncoding
            switch try reader.text(definition.bodyEncoding, at: "bodyEncoding") ?? "json" {
            case "json": bodyEncoding = .json
            case "form": bodyEncoding = .form
            case let other: throw ServiceRegistry.ConfigurationError(file: reader.file, key: "bodyEncoding", problem: "\"\(other)\" is neither \"json\" nor \"form\"")
            }
            let name = try reader.text(definition.arrayEncoding, at: "arrayEncoding") ?? "brackets"
            guard let arrayEncoding = Parameters.ArrayEncoding(configName: name) else {
                throw ServiceRegistry.ConfigurationError(file: reader.file, key: "arrayEncoding", problem: "\"\(name)\" is not one of \(Parameters.ArrayEncoding.configNames.joined(separator: ", "))")
            }
            return (bodyEncoding, arrayEncoding)
        }

        private static func timeouts(_ seconds: Double?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> HTTPRequest.Timeouts? {
            guard let seconds else { return nil }
            // A week at most: a larger number is a mistake, and past about 9.2e15 the conversion to
            // whole milliseconds would overflow.
            guard seconds > 0, seconds <= Self.maxTimeoutSeconds else {
                throw ServiceRegistry.ConfigurationError(
                    file: reader.file, key: "timeoutSeconds", problem: "must be a positive number of seconds, at most \(Int(Self.maxTimeoutSeconds)) (a week)")
            }
            return HTTPRequest.Timeouts(connect: .seconds(min(seconds, 10)), total: .milliseconds(Int(seconds * 1000)))
        }

        private static func signer(_ signing: ServiceFile.Signing?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> (any RequestSigner)? {
            guard let signing else { return AIFHMACSigner() }
            let file = reader.file
            let placement = try reader.text(signing.placement, at: "signing.placement") ?? "query"
            guard placement == "query" || placement == "headers" else {
                throw ServiceRegistry.ConfigurationError(file: file, key: "signing.placement", problem: "\"\(placement)\" is neither \"query\" nor \"headers\"")
            }
            switch try reader.text(signing.scheme, at: "signing.scheme") ?? "aif-hmac" {
            case "aif-hmac": return AIFHMACSigner(placement: placement == "headers" ? .headers : .query)
            case "rfc9421": return HTTPMessageSignatureSigner()
            case "md5": return LegacyMD5Signer()
            case "none": return nil
            case let other:
                throw ServiceRegistry.ConfigurationError(file: file, key: "signing.scheme", problem: "\"\(other)\" is not one of aif-hmac, rfc9421, md5, none")
            }
        }

        private static func commonHeaders(_ entries: [String: String]?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> HTTPHeaders {
            var headers = HTTPHeaders()
            for (name, value) in (entries ?? [:]).sorted(by: { $0.key < $1.key }) {
                headers.add(name: name, value: try reader.substitute(value, at: "commonHeaders.\(name)"))
            }
            return headers
        }

        private static func commonParameters(_ entries: [String: JSONValue]?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> Parameters {
            var parameters: Parameters = [:]
            for (key, value) in entries ?? [:] {
                parameters[key] = try reader.parameter(value, at: "commonParameters.\(key)")
            }
            return parameters
        }

        private static func decoder(_ decoding: ServiceFile.Decoding?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> FastJSONDecoder? {
            guard let decoding else { return nil }
            var decoder = FastJSONDecoder()
            switch try reader.text(decoding.keys, at: "decoding.keys") ?? "default" {
            case "default": decoder.keyDecodingStrategy = .useDefaultKeys
            case "snakeCase": decoder.keyDecodingStrategy = .convertFromSnakeCase
            case let other: throw ServiceRegistry.ConfigurationError(file: reader.file, key: "decoding.keys", problem: "\"\(other)\" is neither \"default\" nor \"snakeCase\"")
            }
            let format = try reader.text(decoding.dateFormat, at: "decoding.dateFormat")
            let dates = try reader.text(decoding.dates, at: "decoding.dates") ?? (format == nil ? "deferred" : "formatted")
            switch dates {
            case "deferred": decoder.dateDecodingStrategy = .deferredToDate
            case "iso8601": decoder.dateDecodingStrategy = .iso8601
            case "secondsSince1970": decoder.dateDecodingStrategy = .secondsSince1970
            case "millisecondsSince1970": decoder.dateDecodingStrategy = .millisecondsSince1970
            case "formatted":
                guard let format, !format.isEmpty else {
                    throw ServiceRegistry.ConfigurationError(
                        file: reader.file, key: "decoding.dates", problem: "\"formatted\" needs the pattern in decoding.dateFormat (\"yyyy-MM-dd HH:mm:ss\")")
                }
                decoder.dateDecodingStrategy = .formatted(format)
                return decoder
            case let other:
                throw ServiceRegistry.ConfigurationError(
                    file: reader.file, key: "decoding.dates",
                    problem: "\"\(other)\" is not one of deferred, iso8601, secondsSince1970, millisecondsSince1970, formatted")
            }
            if format != nil {
                throw ServiceRegistry.ConfigurationError(
                    file: reader.file, key: "decoding.dateFormat", problem: "a date pattern goes with \"dates\": \"formatted\" (or no \"dates\"), not with \"\(dates)\"")
            }
            return decoder
        }

        private static func envelope(_ envelope: ServiceFile.Envelope?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> ResponseEnvelope? {
            guard let field = try reader.text(envelope?.dataField, at: "envelope.dataField") else { return nil }
            guard !field.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
                throw ServiceRegistry.ConfigurationError(
                    file: reader.file, key: "envelope.dataField", problem: "\"\(field)\" is not a member name or a dotted path of member names")
            }
            return ResponseEnvelope(dataField: field)
        }

        private static func errorBody(_ section: ServiceFile.ErrorBody?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> ErrorBodyRule {
            guard let section else { return .common }
            var rule = ErrorBodyRule.common
            if let field = try reader.text(section.messageField, at: "errorBody.messageField") {
                guard !field.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
                    throw ServiceRegistry.ConfigurationError(file: reader.file, key: "errorBody.messageField", problem: "\"\(field)\" is not a member name or a dotted path of member names")
                }
                rule.messageFields = [field]
            }
            if let field = try reader.text(section.codeField, at: "errorBody.codeField") { rule.codeField = field }
            return rule
        }

        private static func applicationErrors(_ rule: ServiceFile.ApplicationErrors?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> ServiceVeto.Rule? {
            guard let rule else { return nil }
            let messageField = try reader.text(rule.messageField, at: "applicationErrors.messageField")
            var made: ServiceVeto.Rule
            let key: String
            if let flag = try reader.text(rule.successFlag, at: "applicationErrors.successFlag") {
                for (given, name) in [(rule.codeField != nil, "codeField"), (rule.successCodes != nil, "successCodes")] where given {
                    throw ServiceRegistry.ConfigurationError(
                        file: reader.file, key: "applicationErrors.\(name)", problem: "does not go with successFlag: a body says it succeeded by a flag or by a code, not both")
                }
                made = .successFlag(flag, errorField: try reader.text(rule.errorField, at: "applicationErrors.errorField") ?? "error", messageField: messageField)
                key = "applicationErrors.successFlag"
            } else {
                if rule.errorField != nil {
                    throw ServiceRegistry.ConfigurationError(
                        file: reader.file, key: "applicationErrors.errorField", problem: "goes with successFlag (the code of a refusal told by a flag); a coded rule's code is its codeField")
                }
                var successCodes: Set<String> = ["0"]
                if let codes = rule.successCodes {
                    guard !codes.isEmpty else {
                        throw ServiceRegistry.ConfigurationError(file: reader.file, key: "applicationErrors.successCodes", problem: "must be a non-empty array of codes")
                    }
                    successCodes = []
                    for (index, code) in codes.enumerated() {
                        switch code {
                        case .string(let text): successCodes.insert(try reader.substitute(text, at: "applicationErrors.successCodes[\(index)]"))
                        case .integer(let number): successCodes.insert(String(number))
                        case .bool(let flag): successCodes.insert(flag ? "true" : "false")
                        default:
                            throw ServiceRegistry.ConfigurationError(
                                file: reader.file, key: "applicationErrors.successCodes[\(index)]", problem: "must be a string, an integer or a boolean")
                        }
                    }
                }
                made = ServiceVeto.Rule(
                    codeField: try reader.text(rule.codeField, at: "applicationErrors.codeField") ?? "code", messageField: messageField ?? "message",
                    successCodes: successCodes)
                key = "applicationErrors"
            }
            made.warningsField = try reader.text(rule.warningsField, at: "applicationErrors.warningsField")
            if let problem = made.problem { throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: problem) }
            return made
        }
    }
}

extension ServiceRegistry {
    /// What is wrong with a config file (a service's or API defines'), and where.
    public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The file.
        public let file: String
        /// The key path (`environments.online.privateKey`), or `nil` for the whole file.
        public let key: String?
        /// What is wrong with it.
        public let problem: String
        /// Where in the file, when its format tells (YAML does): 1-based.
        public let line: Int?
        /// The column on ``line``, 1-based.
        public let column: Int?

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - file: The file.
        ///   - key: The key path, or `nil` for the whole file.
        ///   - problem: What is wrong.
        ///   - line: The line, when known.
        ///   - column: The column, when known.
        public init(file: String, key: String?, problem: String, line: Int? = nil, column: Int? = nil) {
            self.file = file
            self.key = key
            self.problem = problem
            self.line = line
            self.column = column
        }

        /// `FILE: KEY PROBLEM`, or `FILE:LINE:COLUMN: KEY PROBLEM` when the place is known.
        public var description: String {
            let place = line.map { line in "\(file):\(line):\(column ?? 1)" } ?? file
            return key.map { "\(place): \($0) \(problem)" } ?? "\(place)\(line == nil ? "" : ":") \(problem)"
        }
    }
}

extension ServiceRegistry {
    /// Registers every `*.json` service definition in a folder (not the `*.apis.json` files of
    /// API defines: ``registerAPIs(inDirectory:environment:formats:)`` reads those).
    ///
    /// - Parameters:
    ///   - directory: The folder, for example `Configs/`.
    ///   - environment: Where `${NAME}` references are looked up.
    /// - Returns: The names registered, sorted.
    /// - Throws: ``ServiceRegistry/ConfigurationError`` for the first file that is wrong (nothing is registered
    ///   then).
    @discardableResult
    public func registerServices(
        inDirectory directory: URL,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ServiceRegistry.ConfigurationError) -> [ServiceName] {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "json" && !$0.lastPathComponent.hasSuffix(".apis.json") }
                .sorted { $0.path < $1.path }
        } catch {
            throw ServiceRegistry.ConfigurationError(file: directory.path, key: nil, problem: "cannot be listed: \(error.localizedDescription)")
        }
        var services: [ServiceRegistry.ConfiguredService] = []
        for file in files {
            services.append(try ServiceRegistry.ConfiguredService.load(from: file, environment: environment))
        }
        for service in services { register(service) }
        return services.map(\.name).sorted()
    }
}

/// Turns a config file's values into what a service holds — `${NAME}` references replaced —,
/// naming the file and key path in every error.
struct ConfigReader {
    let file: String
    let environment: [String: String]

    func parameter(_ value: JSONValue, at path: String) throws(ServiceRegistry.ConfigurationError) -> JSONValue {
        switch value {
        case .string(let text): return .string(try substitute(text, at: path))
        case .integer, .bool, .null: return value
        case .number(let number):
            guard number.isFinite else {
                throw ServiceRegistry.ConfigurationError(file: file, key: path, problem: "must be a finite number: JSON cannot send \(number)")
            }
            return value
        case .array(let array):
            var values: [JSONValue] = []
            for (index, element) in array.enumerated() { values.append(try parameter(element, at: "\(path)[\(index)]")) }
            return .array(values)
        case .object(let object):
            var values: [String: JSONValue] = [:]
            for (key, element) in object { values[key] = try parameter(element, at: "\(path).\(key)") }
            return .object(values)
        }
    }

    /// An optional string of the file, its `${NAME}` references replaced.
    func text(_ value: String?, at path: String) throws(ServiceRegistry.ConfigurationError) -> String? {
        guard let value else { return nil }
        return try substitute(value, at: path)
    }

    /// Replaces each `${NAME}` with the environment variable `NAME`; `$${` is the text `${`.
    func substitute(_ text: String, at path: String) throws(ServiceRegistry.ConfigurationError) -> String {
        // Most values refer to nothing: skip the search (Foundation's, a tenth of the time of
        // reading a thousand API defines).
        guard text.utf8.contains(UInt8(ascii: "$")) else { return text }
        var result = ""
        var rest = text[...]
        while let start = rest.range(of: "${") {
            // `$${` is the text `${`, written so that it is not read as a reference.
            if start.lowerBound > rest.startIndex, rest[rest.index(before: start.lowerBound)] == "$" {
                result += rest[..<rest.index(before: start.lowerBound)] + "${"
                rest = rest[start.upperBound...]
                continue
            }
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw ServiceRegistry.ConfigurationError(file: file, key: path, problem: "has an unterminated ${…} reference")
            }
            result += rest[..<start.lowerBound]
            let variable = String(rest[start.upperBound..<end])
            guard let value = environment[variable] else {
                throw ServiceRegistry.ConfigurationError(file: file, key: path, problem: "refers to the environment variable \(variable), which is not set")
            }
            result += value
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}
