import Foundation

/// A service definition file as it is written (``ConfiguredService`` documents the keys): typed
/// sections, each refusing keys it does not know. Values keep the file's spelling (`"snakeCase"`,
/// `"${KEY}"`); ``ConfiguredService/parse(_:file:environment:)`` checks and turns them into the
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
    var envelope: Envelope?
    var retry: Retry?
    var errorPolicies: ErrorPolicies?
    var cacheVersion: Int?

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case name, defaultEnvironment, bodyEncoding, arrayEncoding, timeoutSeconds, signing, commonHeaders, commonParameters, environments
        case decoding, applicationErrors, envelope, retry, errorPolicies, cacheVersion
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.knownKeysContainer(keyedBy: CodingKeys.self)
        name = try keys.decode(String.self, forKey: .name)
        defaultEnvironment = try keys.decodeIfPresent(String.self, forKey: .defaultEnvironment)
        bodyEncoding = try keys.decodeIfPresent(String.self, forKey: .bodyEncoding)
        arrayEncoding = try keys.decodeIfPresent(String.self, forKey: .arrayEncoding)
        timeoutSeconds = try keys.decodeIfPresent(Double.self, forKey: .timeoutSeconds)
        signing = try keys.decodeIfPresent(Signing.self, forKey: .signing)
        commonHeaders = try keys.decodeIfPresent([String: String].self, forKey: .commonHeaders)
        commonParameters = try keys.decodeIfPresent([String: JSONValue].self, forKey: .commonParameters)
        environments = try keys.decodeIfPresent([String: Environment].self, forKey: .environments)
        decoding = try keys.decodeIfPresent(Decoding.self, forKey: .decoding)
        applicationErrors = try keys.decodeIfPresent(ApplicationErrors.self, forKey: .applicationErrors)
        envelope = try keys.decodeIfPresent(Envelope.self, forKey: .envelope)
        retry = try keys.decodeIfPresent(Retry.self, forKey: .retry)
        errorPolicies = try keys.decodeIfPresent(ErrorPolicies.self, forKey: .errorPolicies)
        cacheVersion = try keys.decodeIfPresent(Int.self, forKey: .cacheVersion)
    }

    /// One entry of `environments`: a server, or a mock (`fixtures` and its keys).
    struct Environment: Decodable {
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

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case baseURL, apiVersion, publicKey, privateKey, signsAllParameters, fixtures, latencyMs, failureRate, seed
        }

        init(from decoder: any Decoder) throws {
            let keys = try decoder.knownKeysContainer(keyedBy: CodingKeys.self)
            baseURL = try keys.decodeIfPresent(String.self, forKey: .baseURL)
            apiVersion = try keys.decodeIfPresent(String.self, forKey: .apiVersion)
            publicKey = try keys.decodeIfPresent(String.self, forKey: .publicKey)
            privateKey = try keys.decodeIfPresent(String.self, forKey: .privateKey)
            signsAllParameters = try keys.decodeIfPresent(Bool.self, forKey: .signsAllParameters)
            fixtures = try keys.decodeIfPresent(String.self, forKey: .fixtures)
            latencyMs = try keys.decodeIfPresent(JSONValue.self, forKey: .latencyMs)
            failureRate = try keys.decodeIfPresent(Double.self, forKey: .failureRate)
            seed = try keys.decodeIfPresent(Int.self, forKey: .seed)
        }
    }

    /// `signing`: `scheme` and `placement`.
    struct Signing: Decodable {
        var scheme: String?
        var placement: String?

        private enum CodingKeys: String, CodingKey, CaseIterable { case scheme, placement }

        init(from decoder: any Decoder) throws {
            let keys = try decoder.knownKeysContainer(keyedBy: CodingKeys.self)
            scheme = try keys.decodeIfPresent(String.self, forKey: .scheme)
            placement = try keys.decodeIfPresent(String.self, forKey: .placement)
        }
    }

    /// `decoding`: `keys` and `dates`.
    struct Decoding: Decodable {
        var keys: String?
        var dates: String?

        private enum CodingKeys: String, CodingKey, CaseIterable { case keys, dates }

        init(from decoder: any Decoder) throws {
            let container = try decoder.knownKeysContainer(keyedBy: CodingKeys.self)
            keys = try container.decodeIfPresent(String.self, forKey: .keys)
            dates = try container.decodeIfPresent(String.self, forKey: .dates)
        }
    }

    /// `applicationErrors`: the code and message fields, and the success codes (strings or
    /// whole numbers).
    struct ApplicationErrors: Decodable {
        var codeField: String?
        var messageField: String?
        var successCodes: [JSONValue]?

        private enum CodingKeys: String, CodingKey, CaseIterable { case codeField, messageField, successCodes }

        init(from decoder: any Decoder) throws {
            let keys = try decoder.knownKeysContainer(keyedBy: CodingKeys.self)
            codeField = try keys.decodeIfPresent(String.self, forKey: .codeField)
            messageField = try keys.decodeIfPresent(String.self, forKey: .messageField)
            successCodes = try keys.decodeIfPresent([JSONValue].self, forKey: .successCodes)
        }
    }

    /// `envelope`: where the content is.
    struct Envelope: Decodable {
        var dataField: String

        private enum CodingKeys: String, CodingKey, CaseIterable { case dataField }

        init(from decoder: any Decoder) throws {
            dataField = try decoder.knownKeysContainer(keyedBy: CodingKeys.self).decode(String.self, forKey: .dataField)
        }
    }

    /// `retry`: `true` or `false`, or the policy's values to change.
    enum Retry: Decodable {
        case enabled(Bool)
        case changed(Changes)

        init(from decoder: any Decoder) throws {
            if let flag = try? decoder.singleValueContainer().decode(Bool.self) {
                self = .enabled(flag)
            } else {
                self = .changed(try Changes(from: decoder))
            }
        }

        /// What a `retry` object changes of the standard policy.
        struct Changes: Decodable {
            var maxRetries: Int?
            var statusCodes: [Int]?
            var errors: [String]?
            var methods: [String]?
            var idempotencyKeyHeader: String?
            var baseDelaySeconds: Double?
            var maxDelaySeconds: Double?

            private enum CodingKeys: String, CodingKey, CaseIterable {
                case maxRetries, statusCodes, errors, methods, idempotencyKeyHeader, baseDelaySeconds, maxDelaySeconds
            }

            init(from decoder: any Decoder) throws {
                let keys = try decoder.knownKeysContainer(keyedBy: CodingKeys.self)
                maxRetries = try keys.decodeIfPresent(Int.self, forKey: .maxRetries)
                statusCodes = try keys.decodeIfPresent([Int].self, forKey: .statusCodes)
                errors = try keys.decodeIfPresent([String].self, forKey: .errors)
                methods = try keys.decodeIfPresent([String].self, forKey: .methods)
                idempotencyKeyHeader = try keys.decodeIfPresent(String.self, forKey: .idempotencyKeyHeader)
                baseDelaySeconds = try keys.decodeIfPresent(Double.self, forKey: .baseDelaySeconds)
                maxDelaySeconds = try keys.decodeIfPresent(Double.self, forKey: .maxDelaySeconds)
            }
        }
    }

    /// `errorPolicies`: actions by application code and by HTTP status.
    struct ErrorPolicies: Decodable {
        var codes: [String: String]?
        var statuses: [String: String]?

        private enum CodingKeys: String, CodingKey, CaseIterable { case codes, statuses }

        init(from decoder: any Decoder) throws {
            let keys = try decoder.knownKeysContainer(keyedBy: CodingKeys.self)
            codes = try keys.decodeIfPresent([String: String].self, forKey: .codes)
            statuses = try keys.decodeIfPresent([String: String].self, forKey: .statuses)
        }
    }
}

// MARK: Reading a file

extension ServiceFile {
    /// Reads a definition from JSON bytes, parsed once: a syntax error is located (line and
    /// column), a value of the wrong type or an unknown key is named by its key path.
    static func decode(_ data: Data, file: String) throws(ConfigurationError) -> ServiceFile {
        let tape: JSONTape
        do {
            tape = try JSONTape(parsing: [UInt8](data))
        } catch {
            throw ConfigurationError(file: file, key: nil, problem: "is not valid JSON: \(error.message) (at \(Self.location(of: error.offset, in: data)))")
        }
        do {
            return try FastJSONDecoder().decode(ServiceFile.self, from: tape, at: 0)
        } catch let error as DecodingError {
            throw ConfigurationError(file: file, error)
        } catch {
            throw ConfigurationError(file: file, key: nil, problem: "cannot be read: \(error)")
        }
    }

    /// `line L, column C` (1-based) of a byte offset.
    private static func location(of offset: Int, in data: Data) -> String {
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
}

extension ConfigurationError {
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
