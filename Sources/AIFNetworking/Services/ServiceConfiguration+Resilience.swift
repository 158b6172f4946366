import Foundation

extension ConfiguredService {
    /// The transport failures a config file can name, by name.
    static let retryableErrorNames: [String: TransportError.Code] = [
        "connectionRefused": .connectionRefused, "connectionDropped": .connectionDropped, "connectTimeout": .connectTimeout,
        "totalTimeout": .totalTimeout, "stalled": .stalled, "hostUnreachable": .hostUnreachable, "nameResolutionFailed": .nameResolutionFailed,
    ]

    /// The `retry` key: `false` (or `{"maxRetries": 0}`) for no retries, `true` or absent for
    /// the defaults, or an object overriding some of them.
    static func parseRetryPolicy(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> RetryPolicy {
        guard let value = object["retry"] else { return .standard }
        if case .bool(let enabled) = value { return enabled ? .standard : .never }
        let file = reader.file
        let entry = try reader.object(value, at: "retry")
        try reader.rejectUnknownKeys(entry, at: "retry", allowed: [
            "maxRetries", "statusCodes", "errors", "methods", "idempotencyKeyHeader", "baseDelaySeconds", "maxDelaySeconds",
        ])
        var policy = RetryPolicy.standard
        if let value = entry["maxRetries"] {
            guard case .integer(let count) = value, (0...10).contains(count) else {
                throw ConfigurationError(file: file, key: "retry.maxRetries", problem: "must be a whole number from 0 to 10")
            }
            policy.maxRetries = count
        }
        if let value = entry["statusCodes"] {
            policy.retryableStatusCodes = Set(try list(value, at: "retry.statusCodes", reader: reader) { element, key throws(ConfigurationError) in
                guard case .integer(let code) = element, (100...599).contains(code) else {
                    throw ConfigurationError(file: file, key: key, problem: "must be an HTTP status code (100–599)")
                }
                return code
            })
        }
        if let value = entry["errors"] {
            policy.retryableErrors = Set(try list(value, at: "retry.errors", reader: reader) { element, key throws(ConfigurationError) in
                guard case .string(let name) = element, let code = retryableErrorNames[name] else {
                    throw ConfigurationError(file: file, key: key, problem: "must be one of: \(retryableErrorNames.keys.sorted().joined(separator: ", "))")
                }
                return code
            })
        }
        if let value = entry["methods"] {
            policy.methods = Set(try list(value, at: "retry.methods", reader: reader) { element, key throws(ConfigurationError) in
                guard case .string(let name) = element, !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                    throw ConfigurationError(file: file, key: key, problem: "must be a method name such as \"GET\"")
                }
                return HTTPMethod(rawValue: name.uppercased())
            })
        }
        if let header = try reader.string(entry, "idempotencyKeyHeader", at: "retry", required: false) {
            guard !header.isEmpty, header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }) else {
                throw ConfigurationError(file: file, key: "retry.idempotencyKeyHeader", problem: "must be a header name")
            }
            policy.idempotencyKeyHeader = header
        }
        if let base = try seconds(entry, "baseDelaySeconds", reader: reader) { policy.baseDelay = base }
        if let cap = try seconds(entry, "maxDelaySeconds", reader: reader) { policy.maxDelay = cap }
        guard policy.baseDelay <= policy.maxDelay else {
            throw ConfigurationError(file: file, key: "retry.baseDelaySeconds", problem: "must not be more than retry.maxDelaySeconds")
        }
        return policy
    }

    /// The `errorPolicies` key: `{"codes": {"4011": "refreshCredentials"}, "statuses": {"426": "handler:upgradeRequired"}}`.
    static func parseErrorPolicies(_ object: [String: JSONValue], reader: ConfigReader) throws(ConfigurationError) -> ErrorPolicies? {
        guard let value = object["errorPolicies"] else { return nil }
        let entry = try reader.object(value, at: "errorPolicies")
        try reader.rejectUnknownKeys(entry, at: "errorPolicies", allowed: ["codes", "statuses"])
        var policies = ErrorPolicies()
        for (group, isStatus) in [("codes", false), ("statuses", true)] {
            guard let groupValue = entry[group] else { continue }
            for (key, policyValue) in try reader.object(groupValue, at: "errorPolicies.\(group)") {
                let path = "errorPolicies.\(group).\(key)"
                guard case .string(let text) = policyValue, let policy = ErrorPolicies.Action(configValue: text) else {
                    throw ConfigurationError(
                        file: reader.file, key: path, problem: "must be \"surface\", \"retry\", \"refreshCredentials\", \"correctClock\" or \"handler:NAME\"")
                }
                if isStatus {
                    guard let status = Int(key), (100...599).contains(status) else {
                        throw ConfigurationError(file: reader.file, key: path, problem: "is not an HTTP status code (100–599)")
                    }
                    policies.statuses[status] = policy
                } else {
                    guard !key.isEmpty else { throw ConfigurationError(file: reader.file, key: path, problem: "is not an error code") }
                    policies.codes[key] = policy
                }
            }
        }
        return policies
    }

    /// A non-empty array, each element read by `element` (given its key for errors).
    private static func list<Element>(
        _ value: JSONValue, at key: String, reader: ConfigReader, _ element: (JSONValue, String) throws(ConfigurationError) -> Element
    ) throws(ConfigurationError) -> [Element] {
        guard case .array(let values) = value else {
            throw ConfigurationError(file: reader.file, key: key, problem: "must be an array")
        }
        var elements: [Element] = []
        for (index, value) in values.enumerated() {
            elements.append(try element(value, "\(key)[\(index)]"))
        }
        return elements
    }

    /// A delay in seconds: from 0 to an hour.
    private static func seconds(_ entry: [String: JSONValue], _ key: String, reader: ConfigReader) throws(ConfigurationError) -> Duration? {
        guard let value = entry[key] else { return nil }
        let seconds: Double
        switch value {
        case .integer(let number): seconds = Double(number)
        case .number(let number): seconds = number
        default: seconds = -1
        }
        guard seconds >= 0, seconds <= 3600 else {
            throw ConfigurationError(file: reader.file, key: "retry.\(key)", problem: "must be a number of seconds from 0 to 3600")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
