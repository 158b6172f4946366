import Foundation

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
///   "environments": {
///     "online": { "baseURL": "https://api.shop.example", "apiVersion": "v1",
///                 "publicKey": "${SHOP_PUBLIC_KEY}", "privateKey": "${SHOP_PRIVATE_KEY}",
///                 "signsAllParameters": true }
///   }
/// }
/// ```
///
/// Any string may use `${NAME}` to read an environment variable; a private key must (a file
/// never holds a secret in clear). `signing.scheme` is `aif-hmac` (default), `rfc9421`, `md5`
/// or `none`; `signing.placement` is `query` (default) or `headers` for AIF-HMAC.
/// `decoding.keys` is `default` or `snakeCase`, `decoding.dates` is `deferred` (default),
/// `iso8601`, `secondsSince1970` or `millisecondsSince1970`. `applicationErrors` makes a
/// response whose JSON body carries another code than a success code fail as a service veto
/// (see ``ApplicationErrorRule``). `retry` sets the ``RetryPolicy``: `false` for none, or an
/// object whose keys override the defaults — `maxRetries`, `statusCodes`, `errors`
/// (`connectionRefused`, `connectionDropped`, `connectTimeout`, `totalTimeout`, `stalled`,
/// `hostUnreachable`, `nameResolutionFailed`), `methods`, `idempotencyKeyHeader`,
/// `baseDelaySeconds`, `maxDelaySeconds`. `errorPolicies` maps application codes (`codes`) and
/// HTTP statuses (`statuses`) to `surface`, `retry`, `refreshCredentials`, `correctClock` or `handler:NAME`
/// (see ``ErrorPolicies/Action``). `cacheVersion` (a whole number, 0 by default) is the
/// ``Service/cacheVersion``.
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
    public let bodyEncoding: BodyEncoding
    /// The array encoding.
    public let arrayEncoding: ArrayEncoding
    /// The timeouts.
    public let timeouts: HTTPRequest.Timeouts?
    /// The signer.
    public let signer: (any RequestSigner)?
    /// The decoder of its responses, from the `decoding` key (`nil` without one).
    public let decoder: (any ContentDecoder)?
    /// The rule for application-level errors, from the `applicationErrors` key.
    public let applicationErrors: ApplicationErrorRule?
    /// Where the content sits in wrapped bodies, from the `envelope` key.
    public let envelope: ResponseEnvelope?
    /// When failed loads are sent again, from the `retry` key (``RetryPolicy/standard`` without
    /// one).
    public let retryPolicy: RetryPolicy
    /// What loads do on given application codes and statuses, from the `errorPolicies` key.
    public let errorPolicies: ErrorPolicies?
    /// The cache version of the service's responses, from the `cacheVersion` key (0 without
    /// one).
    public let cacheVersion: Int
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
    /// - Throws: ``ConfigurationError`` naming the file and the key that is wrong.
    public static func load(
        from file: URL,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> ConfiguredService {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ConfigurationError(file: file.path, key: nil, problem: "cannot be read: \(error.localizedDescription)")
        }
        return try parse(data, file: file.path, environment: environment)
    }

    /// Reads a service definition from JSON bytes; `file` names them in errors.
    public static func parse(_ data: Data, file: String, environment: [String: String]) throws(ConfigurationError) -> ConfiguredService {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw ConfigurationError(file: file, key: nil, problem: "is not valid JSON" + (syntaxErrorLocation(in: data).map { " (at \($0))" } ?? ""))
        }
        let reader = ConfigReader(file: file, environment: environment)
        let object = try reader.object(root, at: "")
        try reader.rejectUnknownKeys(object, at: "", allowed: [
            "name", "defaultEnvironment", "bodyEncoding", "arrayEncoding", "timeoutSeconds", "signing", "commonHeaders",
            "commonParameters", "environments", "decoding", "applicationErrors", "envelope", "retry", "errorPolicies", "cacheVersion",
        ])
        let name = try reader.string(object, "name", at: "", required: true)!
        let environments = try environments(object, reader: reader)
        let defaultEnvironment = ServiceEnvironment.Name(rawValue: try reader.string(object, "defaultEnvironment", at: "", required: false) ?? "online")
        guard environments[defaultEnvironment] != nil else {
            throw ConfigurationError(
                file: file, key: "defaultEnvironment",
                problem: "\"\(defaultEnvironment)\" is not one of the environments (\(environments.keys.sorted().map(\.rawValue).joined(separator: ", ")))")
        }
        let (bodyEncoding, arrayEncoding) = try encodings(object, reader: reader)
        var cacheVersion = 0
        if let value = object["cacheVersion"] {
            guard case .integer(let version) = value, version >= 0 else {
                throw ConfigurationError(file: file, key: "cacheVersion", problem: "must be a whole number, 0 or more")
            }
            cacheVersion = version
        }
        return ConfiguredService(
            name: ServiceName(rawValue: name), environments: environments, defaultEnvironment: defaultEnvironment,
            bodyEncoding: bodyEncoding, arrayEncoding: arrayEncoding, timeouts: try timeouts(object, reader: reader),
            signer: try signer(object, reader: reader), decoder: try decoding(object, reader: reader),
            applicationErrors: try applicationErrors(object, reader: reader), envelope: try envelope(object, reader: reader),
            retryPolicy: try parseRetryPolicy(object, reader: reader), errorPolicies: try parseErrorPolicies(object, reader: reader),
            cacheVersion: cacheVersion, file: file,
            headers: try commonHeaders(object, reader: reader), parameters: try commonParameters(object, reader: reader))
    }

    private static func environments(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> [ServiceEnvironment.Name: ServiceEnvironment] {
        let file = reader.file
        guard let environmentsValue = object["environments"] else {
            throw ConfigurationError(file: file, key: "environments", problem: "is missing: a service needs at least one environment")
        }
        let environmentObjects = try reader.object(environmentsValue, at: "environments")
        guard !environmentObjects.isEmpty else {
            throw ConfigurationError(file: file, key: "environments", problem: "is empty: a service needs at least one environment")
        }
        var environments: [ServiceEnvironment.Name: ServiceEnvironment] = [:]
        for (environmentName, value) in environmentObjects {
            environments[ServiceEnvironment.Name(rawValue: environmentName)] = try environment(value, at: "environments.\(environmentName)", reader: reader)
        }
        return environments
    }

    private static func environment(_ value: JSONValue, at path: String, reader: ConfigReader) throws(ConfigurationError) -> ServiceEnvironment {
        let file = reader.file
        let entry = try reader.object(value, at: path)
        try reader.rejectUnknownKeys(
            entry, at: path, allowed: ["baseURL", "apiVersion", "publicKey", "privateKey", "signsAllParameters", "fixtures", "latencyMs", "failureRate", "seed"])
        let mock = try mockBehavior(entry, at: path, reader: reader)
        let baseText = try reader.string(entry, "baseURL", at: path, required: mock == nil) ?? "http://mock.invalid"
        guard let baseURL = URL(string: baseText), let scheme = baseURL.scheme?.lowercased(), scheme == "http" || scheme == "https", baseURL.host != nil else {
            throw ConfigurationError(file: file, key: "\(path).baseURL", problem: "\"\(baseText)\" is not an http(s) URL")
        }
        let publicKey = try reader.string(entry, "publicKey", at: path, required: false)
        if case .string(let rawPrivate) = entry["privateKey"], !rawPrivate.hasPrefix("${") || !rawPrivate.hasSuffix("}") {
            throw ConfigurationError(file: file, key: "\(path).privateKey", problem: "must name an environment variable (write \"${NAME}\"): a config file never holds a secret in clear")
        }
        let privateKey = try reader.string(entry, "privateKey", at: path, required: false)
        if (publicKey == nil) != (privateKey == nil) {
            throw ConfigurationError(file: file, key: "\(path)", problem: "has one of publicKey and privateKey without the other")
        }
        return ServiceEnvironment(
            baseURL: baseURL,
            apiVersion: try reader.string(entry, "apiVersion", at: path, required: false) ?? "",
            credentials: publicKey.map { SigningCredentials(publicKey: $0, privateKey: Secret(privateKey!)) },
            signsAllParameters: try reader.bool(entry, "signsAllParameters", at: path) ?? true,
            mock: mock
        )
    }

    /// An environment's mock keys: `fixtures` (a directory, relative to the config file's),
    /// `latencyMs` (`[low, high]` or one number), `failureRate` (0 to 1), `seed`.
    private static func mockBehavior(_ entry: [String: JSONValue], at path: String, reader: ConfigReader) throws(ConfigurationError) -> MockBehavior? {
        let file = reader.file
        guard let fixtures = try reader.string(entry, "fixtures", at: path, required: false) else {
            if let stray = ["latencyMs", "failureRate", "seed"].first(where: { entry[$0] != nil }) {
                throw ConfigurationError(file: file, key: "\(path).\(stray)", problem: "belongs to a mock environment, which names its \"fixtures\"")
            }
            return nil
        }
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
        if let value = entry["latencyMs"] {
            if case .array(let bounds) = value, bounds.count == 2, let low = milliseconds(bounds[0]), let high = milliseconds(bounds[1]), low <= high {
                latency = low...high
            } else if let fixed = milliseconds(value) {
                latency = fixed...fixed
            } else {
                throw ConfigurationError(file: file, key: "\(path).latencyMs", problem: "must be milliseconds from 0 to 86,400,000 (a day): a number, or [low, high] with low ≤ high")
            }
        }
        var failureRate = 0.0
        switch entry["failureRate"] {
        case nil: break
        case .integer(let rate)? where (0...1).contains(rate): failureRate = Double(rate)
        case .number(let rate)? where (0...1).contains(rate): failureRate = rate
        default: throw ConfigurationError(file: file, key: "\(path).failureRate", problem: "must be a number from 0 to 1")
        }
        var seed: UInt64?
        switch entry["seed"] {
        case nil: break
        case .integer(let value)? where value >= 0: seed = UInt64(value)
        default: throw ConfigurationError(file: file, key: "\(path).seed", problem: "must be a whole number, 0 or more")
        }
        return MockBehavior(fixtures: directory, latency: latency, failureRate: failureRate, seed: seed)
    }

    private static func encodings(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> (BodyEncoding, ArrayEncoding) {
        let bodyEncoding: BodyEncoding
        switch try reader.string(object, "bodyEncoding", at: "", required: false) ?? "json" {
        case "json": bodyEncoding = .json
        case "form": bodyEncoding = .form
        case let other: throw ConfigurationError(file: reader.file, key: "bodyEncoding", problem: "\"\(other)\" is neither \"json\" nor \"form\"")
        }
        let arrayEncoding: ArrayEncoding
        switch try reader.string(object, "arrayEncoding", at: "", required: false) ?? "brackets" {
        case "brackets": arrayEncoding = .brackets
        case "repeated": arrayEncoding = .repeatedKeys
        case let other: throw ConfigurationError(file: reader.file, key: "arrayEncoding", problem: "\"\(other)\" is neither \"brackets\" nor \"repeated\"")
        }
        return (bodyEncoding, arrayEncoding)
    }

    private static func timeouts(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> HTTPRequest.Timeouts? {
        guard let value = object["timeoutSeconds"] else { return nil }
        let seconds: Double
        switch value {
        case .number(let number): seconds = number
        case .integer(let number): seconds = Double(number)
        default: seconds = -1
        }
        // A week at most: a larger number is a mistake, and past about 9.2e15 the conversion to
        // whole milliseconds would overflow.
        guard seconds > 0, seconds <= Self.maxTimeoutSeconds else {
            throw ConfigurationError(
                file: reader.file, key: "timeoutSeconds", problem: "must be a positive number of seconds, at most \(Int(Self.maxTimeoutSeconds)) (a week)")
        }
        return HTTPRequest.Timeouts(connect: .seconds(min(seconds, 10)), total: .milliseconds(Int(seconds * 1000)))
    }

    private static func signer(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> (any RequestSigner)? {
        guard let signingValue = object["signing"] else { return AIFHMACSigner() }
        let file = reader.file
        let signing = try reader.object(signingValue, at: "signing")
        try reader.rejectUnknownKeys(signing, at: "signing", allowed: ["scheme", "placement"])
        let placementText = try reader.string(signing, "placement", at: "signing", required: false) ?? "query"
        guard placementText == "query" || placementText == "headers" else {
            throw ConfigurationError(file: file, key: "signing.placement", problem: "\"\(placementText)\" is neither \"query\" nor \"headers\"")
        }
        switch try reader.string(signing, "scheme", at: "signing", required: false) ?? "aif-hmac" {
        case "aif-hmac": return AIFHMACSigner(placement: placementText == "headers" ? .headers : .query)
        case "rfc9421": return HTTPMessageSignatureSigner()
        case "md5": return LegacyMD5Signer()
        case "none": return nil
        case let other:
            throw ConfigurationError(file: file, key: "signing.scheme", problem: "\"\(other)\" is not one of aif-hmac, rfc9421, md5, none")
        }
    }

    private static func commonHeaders(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        guard let value = object["commonHeaders"] else { return headers }
        for (key, headerValue) in try reader.object(value, at: "commonHeaders").sorted(by: { $0.key < $1.key }) {
            guard case .string(let text) = headerValue else {
                throw ConfigurationError(file: reader.file, key: "commonHeaders.\(key)", problem: "must be a string")
            }
            headers.add(name: key, value: try reader.substitute(text, at: "commonHeaders.\(key)"))
        }
        return headers
    }

    private static func commonParameters(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> Parameters {
        var parameters: Parameters = [:]
        guard let value = object["commonParameters"] else { return parameters }
        for (key, parameterValue) in try reader.object(value, at: "commonParameters") {
            parameters[key] = try reader.parameter(parameterValue, at: "commonParameters.\(key)")
        }
        return parameters
    }

    private static func decoding(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> FastJSONDecoder? {
        guard let value = object["decoding"] else { return nil }
        let decoding = try reader.object(value, at: "decoding")
        try reader.rejectUnknownKeys(decoding, at: "decoding", allowed: ["keys", "dates"])
        var decoder = FastJSONDecoder()
        switch try reader.string(decoding, "keys", at: "decoding", required: false) ?? "default" {
        case "default": decoder.keyDecodingStrategy = .useDefaultKeys
        case "snakeCase": decoder.keyDecodingStrategy = .convertFromSnakeCase
        case let other: throw ConfigurationError(file: reader.file, key: "decoding.keys", problem: "\"\(other)\" is neither \"default\" nor \"snakeCase\"")
        }
        switch try reader.string(decoding, "dates", at: "decoding", required: false) ?? "deferred" {
        case "deferred": decoder.dateDecodingStrategy = .deferredToDate
        case "iso8601": decoder.dateDecodingStrategy = .iso8601
        case "secondsSince1970": decoder.dateDecodingStrategy = .secondsSince1970
        case "millisecondsSince1970": decoder.dateDecodingStrategy = .millisecondsSince1970
        case let other:
            throw ConfigurationError(
                file: reader.file, key: "decoding.dates",
                problem: "\"\(other)\" is not one of deferred, iso8601, secondsSince1970, millisecondsSince1970")
        }
        return decoder
    }

    private static func envelope(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> ResponseEnvelope? {
        guard let value = object["envelope"] else { return nil }
        let envelope = try reader.object(value, at: "envelope")
        try reader.rejectUnknownKeys(envelope, at: "envelope", allowed: ["dataField"])
        let field = try reader.string(envelope, "dataField", at: "envelope", required: true)!
        guard !field.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            throw ConfigurationError(
                file: reader.file, key: "envelope.dataField", problem: "\"\(field)\" is not a member name or a dotted path of member names")
        }
        return ResponseEnvelope(dataField: field)
    }

    private static func applicationErrors(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> ApplicationErrorRule? {
        guard let value = object["applicationErrors"] else { return nil }
        let rule = try reader.object(value, at: "applicationErrors")
        try reader.rejectUnknownKeys(rule, at: "applicationErrors", allowed: ["codeField", "messageField", "successCodes"])
        var successCodes: Set<String> = ["0"]
        if let codes = rule["successCodes"] {
            guard case .array(let values) = codes, !values.isEmpty else {
                throw ConfigurationError(file: reader.file, key: "applicationErrors.successCodes", problem: "must be a non-empty array of codes")
            }
            successCodes = []
            for (index, code) in values.enumerated() {
                switch code {
                case .string(let text): successCodes.insert(text)
                case .integer(let number): successCodes.insert(String(number))
                default:
                    throw ConfigurationError(file: reader.file, key: "applicationErrors.successCodes[\(index)]", problem: "must be a string or an integer")
                }
            }
        }
        return ApplicationErrorRule(
            codeField: try reader.string(rule, "codeField", at: "applicationErrors", required: false) ?? "code",
            messageField: try reader.string(rule, "messageField", at: "applicationErrors", required: false) ?? "message",
            successCodes: successCodes)
    }
}

/// Where the JSON in `data` stops being valid, as `line L, column C` (1-based), when
/// Foundation's parser says (it reports a character offset).
private func syntaxErrorLocation(in data: Data) -> String? {
    do {
        _ = try JSONSerialization.jsonObject(with: data)
        return nil
    } catch {
        let message = "\((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? "")"
        guard let range = message.range(of: "character "),
            let offset = Int(message[range.upperBound...].prefix { $0.isNumber }), offset <= data.count
        else { return nil }
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return "line \(line), column \(column)"
    }
}

/// What is wrong with a service definition file, and where.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public let file: String
    /// The key path (`environments.online.privateKey`), or `nil` for the whole file.
    public let key: String?
    /// What is wrong with it.
    public let problem: String

    /// Creates an error.
    public init(file: String, key: String?, problem: String) {
        self.file = file
        self.key = key
        self.problem = problem
    }

    /// `FILE: KEY PROBLEM`.
    public var description: String {
        key.map { "\(file): \($0) \(problem)" } ?? "\(file) \(problem)"
    }
}

extension ServiceRegistry {
    /// Registers every `*.json` service definition in a folder.
    ///
    /// - Parameters:
    ///   - directory: The folder, for example `Configs/`.
    ///   - environment: Where `${NAME}` references are looked up.
    /// - Returns: The names registered, sorted.
    /// - Throws: ``ConfigurationError`` for the first file that is wrong (nothing is registered
    ///   then).
    @discardableResult
    public func registerServices(
        inDirectory directory: URL,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> [ServiceName] {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "json" }
                .sorted { $0.path < $1.path }
        } catch {
            throw ConfigurationError(file: directory.path, key: nil, problem: "cannot be listed: \(error.localizedDescription)")
        }
        var services: [ConfiguredService] = []
        for file in files {
            services.append(try ConfiguredService.load(from: file, environment: environment))
        }
        for service in services { register(service) }
        return services.map(\.name).sorted()
    }
}

/// A parsed JSON value that keeps numbers and flags apart (Foundation's `JSONSerialization`
/// does not on Linux, where `1` also reads as `true`).
enum JSONValue: Codable, Equatable {
    case string(String)
    case number(Double)
    case integer(Int)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .number(let number): try container.encode(number)
        case .integer(let integer): try container.encode(integer)
        case .bool(let flag): try container.encode(flag)
        case .null: try container.encodeNil()
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }

    /// A scalar as a request carries it (`2`, `true`, `Scale`); `nil` for the rest.
    var parameterText: String? {
        switch self {
        case .string(let text): text
        case .integer(let integer): String(integer)
        case .number(let number): String(number)
        case .bool(let flag): String(flag)
        case .null, .array, .object: nil
        }
    }
}

/// Reads typed values out of parsed JSON, naming the file and key path in every error.
struct ConfigReader {
    let file: String
    let environment: [String: String]

    func object(_ value: JSONValue, at path: String) throws(ConfigurationError) -> [String: JSONValue] {
        guard case .object(let object) = value else {
            throw ConfigurationError(file: file, key: path.isEmpty ? nil : path, problem: path.isEmpty ? "must hold a JSON object" : "must be an object")
        }
        return object
    }

    /// A misspelt key would otherwise be ignored silently; name it, and what is allowed.
    func rejectUnknownKeys(_ object: [String: JSONValue], at path: String, allowed: Set<String>) throws(ConfigurationError) {
        guard let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) else { return }
        throw ConfigurationError(
            file: file, key: path.isEmpty ? unknown : "\(path).\(unknown)",
            problem: "is not a known key; expected one of: \(allowed.sorted().joined(separator: ", "))")
    }

    func string(_ object: [String: JSONValue], _ key: String, at path: String, required: Bool) throws(ConfigurationError) -> String? {
        let fullKey = path.isEmpty ? key : "\(path).\(key)"
        guard let value = object[key] else {
            if required { throw ConfigurationError(file: file, key: fullKey, problem: "is missing") }
            return nil
        }
        guard case .string(let text) = value else {
            throw ConfigurationError(file: file, key: fullKey, problem: "must be a string")
        }
        return try substitute(text, at: fullKey)
    }

    func bool(_ object: [String: JSONValue], _ key: String, at path: String) throws(ConfigurationError) -> Bool? {
        guard let value = object[key] else { return nil }
        guard case .bool(let flag) = value else {
            throw ConfigurationError(file: file, key: "\(path).\(key)", problem: "must be true or false")
        }
        return flag
    }

    func parameter(_ value: JSONValue, at path: String) throws(ConfigurationError) -> ParameterValue {
        switch value {
        case .string(let text): return .string(try substitute(text, at: path))
        case .integer(let number): return .int(number)
        case .number(let number): return .double(number)
        case .bool(let flag): return .bool(flag)
        case .null: return .null
        case .array(let array):
            var values: [ParameterValue] = []
            for (index, element) in array.enumerated() { values.append(try parameter(element, at: "\(path)[\(index)]")) }
            return .array(values)
        case .object(let object):
            var values: [String: ParameterValue] = [:]
            for (key, element) in object { values[key] = try parameter(element, at: "\(path).\(key)") }
            return .object(values)
        }
    }

    /// Replaces each `${NAME}` with the environment variable `NAME`.
    func substitute(_ text: String, at path: String) throws(ConfigurationError) -> String {
        var result = ""
        var rest = text[...]
        while let start = rest.range(of: "${") {
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw ConfigurationError(file: file, key: path, problem: "has an unterminated ${…} reference")
            }
            result += rest[..<start.lowerBound]
            let variable = String(rest[start.upperBound..<end])
            guard let value = environment[variable] else {
                throw ConfigurationError(file: file, key: path, problem: "refers to the environment variable \(variable), which is not set")
            }
            result += value
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}
