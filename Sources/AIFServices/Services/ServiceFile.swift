import Foundation

/// A service definition file as it is written (``ServiceRegistry/ConfiguredService`` documents the keys): typed
/// sections, each refusing keys it does not know. Values keep the file's spelling (`"snakeCase"`,
/// `"${KEY}"`); ``ServiceRegistry/ConfiguredService/parse(_:file:environment:)`` checks and turns them into the
/// service, naming the key of each value it refuses.
struct ServiceFile: Decodable {
    var name: String
    var defaultEnvironment: String?
    var bodyEncoding: String?
    var arrayEncoding: String?
    var timeoutSeconds: Double?
    var signing: Signing?
    var commonHeaders: [String: String]?
    var commonParameters: [String: JSONValue]?
    var environments: [String: Environment]?
    var decoding: Decoding?
    var applicationErrors: ApplicationErrors?
    var errorBody: ErrorBody?
    var envelope: Envelope?
    var retry: Retry?
    var errorPolicies: ErrorPolicies?
    var circuitBreaker: CircuitBreaking?
    var cacheVersion: Int?
    var paging: JSONValue?

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case name, defaultEnvironment, bodyEncoding, arrayEncoding, timeoutSeconds, signing, commonHeaders, commonParameters, environments
        case decoding, applicationErrors, errorBody, envelope, retry, errorPolicies, circuitBreaker, cacheVersion, paging
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.knownKeysContainer(keyedBy: CodingKeys.self)
        name = try keys.decode(String.self, forKey: .name)
        defaultEnvironment = try keys.decodeIfPresent(String.self, forKey: .defaultEnvironment)
        bodyEncoding = try keys.decodeIfPresent(String.self, forKey: .bodyEncoding)
        arrayEncoding = try keys.decodeIfPresent(String.self, forKey: .arrayEncoding)
        timeoutSeconds = try keys.decodeIfPresent(Double.self, forKey: .timeoutSeconds)
        signing = try keys.decodeIfPresent(Checked<Signing>.self, forKey: .signing)?.section
        commonHeaders = try keys.decodeIfPresent([String: String].self, forKey: .commonHeaders)
        commonParameters = try keys.decodeIfPresent([String: JSONValue].self, forKey: .commonParameters)
        environments = try keys.decodeIfPresent([String: Checked<Environment>].self, forKey: .environments)?.mapValues(\.section)
        decoding = try keys.decodeIfPresent(Checked<Decoding>.self, forKey: .decoding)?.section
        applicationErrors = try keys.decodeIfPresent(Checked<ApplicationErrors>.self, forKey: .applicationErrors)?.section
        errorBody = try keys.decodeIfPresent(Checked<ErrorBody>.self, forKey: .errorBody)?.section
        envelope = try keys.decodeIfPresent(Checked<Envelope>.self, forKey: .envelope)?.section
        retry = try keys.decodeIfPresent(Retry.self, forKey: .retry)
        errorPolicies = try keys.decodeIfPresent(Checked<ErrorPolicies>.self, forKey: .errorPolicies)?.section
        circuitBreaker = try keys.decodeIfPresent(CircuitBreaking.self, forKey: .circuitBreaker)
        cacheVersion = try keys.decodeIfPresent(Int.self, forKey: .cacheVersion)
        paging = try keys.decodeIfPresent(JSONValue.self, forKey: .paging)
    }

    /// One entry of `environments`: a server, or a mock (`fixtures` and its keys).
    struct Environment: ConfigSection {
        var baseURL: String?
        var apiVersion: String?
        var publicKey: String?
        var privateKey: String?
        var signsAllParameters: Bool?
        var fixtures: String?
        /// Milliseconds: one number, or `[low, high]`.
        var latencyMs: JSONValue?
        var failureRate: Double?
        var seed: Int?
        /// A Unix-domain socket's path.
        var unixSocket: String?
        /// `"host[:port]": "address[:port]"`.
        var connectTo: [String: String]?
        var clientCertificate: Checked<ClientCertificate>?
        var authorization: Checked<Authorization>?
        var circuitBreaker: CircuitBreaking?
        var trust: Checked<Trust>?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case baseURL, apiVersion, publicKey, privateKey, signsAllParameters, fixtures, latencyMs, failureRate, seed
            case unixSocket, connectTo, clientCertificate, authorization, circuitBreaker, trust
        }
    }

    /// An environment's `authorization`: one of `bearer` (`"${VARIABLE}"`), `basic` (`user`,
    /// `password`) or `parameter` (`name`, `value`).
    struct Authorization: ConfigSection {
        var bearer: String?
        var basic: Checked<Basic>?
        var parameter: Checked<Parameter>?

        enum CodingKeys: String, CodingKey, CaseIterable { case bearer, basic, parameter }

        struct Basic: ConfigSection {
            var user: String
            var password: String?

            enum CodingKeys: String, CodingKey, CaseIterable { case user, password }
        }

        struct Parameter: ConfigSection {
            var name: String
            var value: String

            enum CodingKeys: String, CodingKey, CaseIterable { case name, value }
        }
    }

    /// An environment's `trust`: the certificate authorities its server's certificate chains to
    /// (a PEM file, or `${VARIABLE}` holding PEM), and public-key pins (`sha256//BASE64`).
    struct Trust: ConfigSection {
        var certificateAuthorities: String?
        var pinnedPublicKeys: [String]?

        enum CodingKeys: String, CodingKey, CaseIterable { case certificateAuthorities, pinnedPublicKeys }
    }

    /// An environment's `clientCertificate`: the certificate's PEM file (or `${VARIABLE}` holding
    /// PEM), the key's, and the key's passphrase (`${VARIABLE}`).
    struct ClientCertificate: ConfigSection {
        var certificate: String
        var key: String?
        var passphrase: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case certificate, key, passphrase }
    }

    /// `signing`: `scheme` and `placement`.
    struct Signing: ConfigSection {
        var scheme: String?
        var placement: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case scheme, placement }
    }

    /// `decoding`: `keys` and `dates`.
    struct Decoding: ConfigSection {
        var keys: String?
        var dates: String?
        /// A `DateFormatter` pattern dates are written in (then `dates` is absent or "formatted").
        var dateFormat: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case keys, dates, dateFormat }
    }

    /// `applicationErrors`: the code and message fields, and the success codes (strings or
    /// whole numbers).
    struct ApplicationErrors: ConfigSection {
        var codeField: String?
        var messageField: String?
        var successCodes: [JSONValue]?
        var successFlag: String?
        var errorField: String?
        var warningsField: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case codeField, messageField, successCodes, successFlag, errorField, warningsField }
    }

    /// `errorBody`: where a failed status's body holds the message and the code.
    struct ErrorBody: ConfigSection {
        var messageField: String?
        var codeField: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case messageField, codeField }
    }

    /// `envelope`: where the content is.
    struct Envelope: ConfigSection {
        var dataField: String

        enum CodingKeys: String, CodingKey, CaseIterable { case dataField }
    }

    /// A section written `true` or `false`, or as an object of the values to change of its
    /// defaults: `retry`, `circuitBreaker`.
    enum Switch<Changes: ConfigSection>: Decodable {
        case enabled(Bool)
        case changed(Changes)

        init(from decoder: any Decoder) throws {
            if let flag = try? decoder.singleValueContainer().decode(Bool.self) {
                self = .enabled(flag)
            } else {
                self = .changed(try Checked<Changes>(from: decoder).section)
            }
        }
    }

    /// `retry`: `true` or `false`, or the policy's values to change.
    typealias Retry = Switch<RetryChanges>

    /// What a `retry` object changes of the standard policy.
    struct RetryChanges: ConfigSection {
        var maxRetries: Int?
        var statusCodes: [Int]?
        var retryAfterStatusCodes: [Int]?
        var errors: [String]?
        var methods: [String]?
        var retryUnprocessedRequests: Bool?
        var idempotencyKeyHeader: String?
        var generateIdempotencyKeys: Bool?
        var retryAdviceHeader: String?
        var baseDelaySeconds: Double?
        var maxDelaySeconds: Double?
        var maxTotalWaitSeconds: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case maxRetries, statusCodes, retryAfterStatusCodes, errors, methods, retryUnprocessedRequests, idempotencyKeyHeader, generateIdempotencyKeys
            case retryAdviceHeader
            case baseDelaySeconds, maxDelaySeconds, maxTotalWaitSeconds
        }
    }

    /// `circuitBreaker`: `true` for the defaults, or the policy's values to change.
    typealias CircuitBreaking = Switch<CircuitBreakerChanges>

    /// What a `circuitBreaker` object changes of the default policy.
    struct CircuitBreakerChanges: ConfigSection {
        var failuresToOpen: Int?
        var coolDownSeconds: Double?
        var probes: Int?
        var counted: [String]?
        var serverErrorStatuses: [Int]?

        enum CodingKeys: String, CodingKey, CaseIterable { case failuresToOpen, coolDownSeconds, probes, counted, serverErrorStatuses }
    }

    /// `errorPolicies`: actions by application code and by HTTP status.
    struct ErrorPolicies: ConfigSection {
        var codes: [String: String]?
        var statuses: [String: String]?

        enum CodingKeys: String, CodingKey, CaseIterable { case codes, statuses }
    }
}

// MARK: Reading a file

extension ServiceFile {
    /// Reads a definition from JSON bytes, parsed once: a syntax error is located (line and
    /// column), a value of the wrong type or an unknown key is named by its key path.
    static func decode(_ data: Data, file: String) throws(ServiceRegistry.ConfigurationError) -> ServiceFile {
        let tape: JSONTape
        do {
            tape = try JSONTape(parsing: [UInt8](data))
        } catch {
            throw ServiceRegistry.ConfigurationError(file: file, key: nil, problem: "is not valid JSON: \(error.message) (at \(ServiceRegistry.ConfigurationError.location(of: error.offset, in: data)))")
        }
        do {
            return try FastJSONDecoder().decode(ServiceFile.self, from: tape, at: 0)
        } catch let error as DecodingError {
            throw ServiceRegistry.ConfigurationError(file: file, error)
        } catch {
            throw ServiceRegistry.ConfigurationError(file: file, key: nil, problem: "cannot be read: \(error)")
        }
    }
}

extension ServiceRegistry.ConfigurationError {
    /// `line L, column C` (1-based) of a byte offset.
    static func location(of offset: Int, in data: Data) -> String {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // a character starts here (not a UTF-8 continuation)
                column += 1
            }
        }
        return "line \(line), column \(column)"
    }

    /// A decoding error of a config file, told as the key path and what is wrong with it.
    init(file: String, _ error: DecodingError) {
        switch error {
        case .keyNotFound(let key, let context):
            self.init(file: file, key: Self.keyPath(context.codingPath + [key]), problem: "is missing")
        case .typeMismatch(let type, let context):
            self.init(file: file, key: Self.keyPath(context.codingPath), problem: Self.expectation(of: type, context))
        case .valueNotFound(let type, let context):
            self.init(file: file, key: Self.keyPath(context.codingPath), problem: Self.expectation(of: type, context) + ", not null")
        case .dataCorrupted(let context):
            // The decoder's words for a number of the wrong kind: "Parsed JSON number <1.5> does
            // not fit in Int."
            let text = context.debugDescription
            if text.hasPrefix("Parsed JSON number <"), let end = text.firstIndex(of: ">") {
                let number = text[text.index(text.startIndex, offsetBy: 20)..<end]
                self.init(file: file, key: Self.keyPath(context.codingPath), problem: "must be a whole number in range, not \(number)")
            } else {
                self.init(file: file, key: Self.keyPath(context.codingPath), problem: text)
            }
        @unknown default:
            self.init(file: file, key: nil, problem: "cannot be read: \(error)")
        }
    }

    /// `environments.online.baseURL`, `retry.statusCodes[1]`; `nil` for the whole file.
    private static func keyPath(_ path: [any CodingKey]) -> String? {
        guard !path.isEmpty else { return nil }
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    /// What a value of `type` must be, in the file's words (a container's type is `Any`: the
    /// decoder's description says which it expected).
    private static func expectation(of type: Any.Type, _ context: DecodingError.Context) -> String {
        switch type {
        case is String.Type: "must be a string"
        case is Bool.Type: "must be true or false"
        case is Int.Type: "must be a whole number"
        case is Double.Type: "must be a number"
        default: context.debugDescription.hasPrefix("Expected an array") ? "must be an array" : "must be an object"
        }
    }
}

/// A section of a config file: decoded as Swift synthesizes it, through ``Checked``, which
/// refuses the keys its `CodingKeys` do not name first.
protocol ConfigSection: Decodable {
    associatedtype CodingKeys: CodingKey & CaseIterable
}

/// A ``ConfigSection``, its keys checked before it is decoded.
struct Checked<Section: ConfigSection>: Decodable {
    let section: Section

    init(from decoder: any Decoder) throws {
        _ = try decoder.knownKeysContainer(keyedBy: Section.CodingKeys.self)
        section = try Section(from: decoder)
    }
}

extension Decoder {
    /// A keyed container that refuses the keys `Key` does not name — a misspelt key would
    /// otherwise be ignored silently —, listing the ones it does.
    func knownKeysContainer<Key: CodingKey & CaseIterable>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let present = try container(keyedBy: NameKey.self).allKeys.map(\.stringValue)
        let known = Key.allCases.map(\.stringValue)
        if let unknown = present.sorted().first(where: { !known.contains($0) }) {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [NameKey(unknown)], debugDescription: "is not a known key; expected one of: \(known.sorted().joined(separator: ", "))"))
        }
        return try container(keyedBy: type)
    }
}
