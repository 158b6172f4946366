import Foundation

extension ServiceRegistry.ConfiguredService {
    /// The transport failures a config file can name, by name.
    static let retryableErrorNames: [String: TransportError.Code] = [
        "connectionRefused": .connectionRefused, "connectionDropped": .connectionDropped, "responseLost": .responseLost, "connectTimeout": .connectTimeout,
        "totalTimeout": .totalTimeout, "stalled": .stalled, "hostUnreachable": .hostUnreachable, "nameResolutionFailed": .nameResolutionFailed,
    ]

    /// The `retry` key: `false` (or `{"maxRetries": 0}`) for no retries, `true` or absent for
    /// the defaults, or an object overriding some of them.
    static func retryPolicy(_ retry: ServiceFile.Retry?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> RetryPolicy {
        let changes: ServiceFile.RetryChanges
        switch retry {
        case nil: return .standard
        case .enabled(let enabled)?: return enabled ? .standard : .never
        case .changed(let given)?: changes = given
        }
        let file = reader.file
        var policy = RetryPolicy.standard
        if let count = changes.maxRetries {
            guard (0...10).contains(count) else {
                throw ServiceRegistry.ConfigurationError(file: file, key: "retry.maxRetries", problem: "must be a whole number from 0 to 10")
            }
            policy.maxRetries = count
        }
        if let codes = try statuses(changes.statusCodes, at: "retry.statusCodes", file: file) { policy.retryableStatusCodes = codes }
        if let codes = try statuses(changes.retryAfterStatusCodes, at: "retry.retryAfterStatusCodes", file: file) { policy.retryAfterStatusCodes = codes }
        if let names = changes.errors {
            policy.retryableErrors = []
            for (index, name) in names.enumerated() {
                guard let code = retryableErrorNames[try reader.substitute(name, at: "retry.errors[\(index)]")] else {
                    throw ServiceRegistry.ConfigurationError(file: file, key: "retry.errors[\(index)]", problem: "must be one of: \(retryableErrorNames.keys.sorted().joined(separator: ", "))")
                }
                policy.retryableErrors.insert(code)
            }
        }
        if let names = changes.methods {
            policy.methods = []
            for (index, given) in names.enumerated() {
                let name = try reader.substitute(given, at: "retry.methods[\(index)]")
                guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                    throw ServiceRegistry.ConfigurationError(file: file, key: "retry.methods[\(index)]", problem: "must be a method name such as \"GET\"")
                }
                policy.methods.insert(HTTPMethod(rawValue: name.uppercased()))
            }
        }
        if let retries = changes.retryUnprocessedRequests { policy.retriesUnprocessedRequests = retries }
        if let header = try headerName(changes.idempotencyKeyHeader, at: "retry.idempotencyKeyHeader", reader: reader) {
            policy.idempotencyKeyHeader = header
        }
        if let generates = changes.generateIdempotencyKeys { policy.generatesIdempotencyKeys = generates }
        if let header = try headerName(changes.retryAdviceHeader, at: "retry.retryAdviceHeader", reader: reader) {
            policy.retryAdviceHeader = header
        }
        if let base = try delay(changes.baseDelaySeconds, "baseDelaySeconds", reader: reader) { policy.baseDelay = base }
        if let cap = try delay(changes.maxDelaySeconds, "maxDelaySeconds", reader: reader) { policy.maxDelay = cap }
        if let budget = try delay(changes.maxTotalWaitSeconds, "maxTotalWaitSeconds", reader: reader) { policy.maxTotalWait = budget }
        guard policy.baseDelay <= policy.maxDelay else {
            throw ServiceRegistry.ConfigurationError(file: file, key: "retry.baseDelaySeconds", problem: "must not be more than retry.maxDelaySeconds")
        }
        return policy
    }

    /// A header's name at `key`, checked to be one.
    private static func headerName(_ value: String?, at key: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> String? {
        guard let header = try reader.text(value, at: key) else { return nil }
        guard !header.isEmpty, header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }) else {
            throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: "must be a header name")
        }
        return header
    }

    /// A list of statuses at `key`, each checked to be one.
    private static func statuses(_ codes: [Int]?, at key: String, file: String) throws(ServiceRegistry.ConfigurationError) -> Set<Int>? {
        guard let codes else { return nil }
        for (index, code) in codes.enumerated() where !(100...599).contains(code) {
            throw ServiceRegistry.ConfigurationError(file: file, key: "\(key)[\(index)]", problem: "must be an HTTP status code (100–599)")
        }
        return Set(codes)
    }

    /// The `errorPolicies` key: `{"codes": {"4011": "refreshCredentials"}, "statuses": {"426": "handler:upgradeRequired"}}`.
    static func errorPolicies(_ entry: ServiceFile.ErrorPolicies?, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> ErrorPolicies? {
        guard let entry else { return nil }
        var policies = ErrorPolicies()
        for (group, isStatus, actions) in [("codes", false, entry.codes), ("statuses", true, entry.statuses)] {
            for (key, text) in actions ?? [:] {
                let path = "errorPolicies.\(group).\(key)"
                guard let action = ErrorPolicies.Action(configValue: try reader.substitute(text, at: path)) else {
                    throw ServiceRegistry.ConfigurationError(
                        file: reader.file, key: path, problem: "must be \"surface\", \"retry\", \"refreshCredentials\", \"correctClock\" or \"handler:NAME\"")
                }
                if isStatus {
                    guard let status = Int(key), (100...599).contains(status) else {
                        throw ServiceRegistry.ConfigurationError(file: reader.file, key: path, problem: "is not an HTTP status code (100–599)")
                    }
                    policies.statuses[status] = action
                } else {
                    guard !key.isEmpty else { throw ServiceRegistry.ConfigurationError(file: reader.file, key: path, problem: "is not an error code") }
                    policies.codes[key] = action
                }
            }
        }
        return policies
    }

    /// A `circuitBreaker` key at `key`: `true` for the default policy, `false` or absent for none,
    /// or an object changing some of the defaults.
    static func circuitBreaker(
        _ entry: ServiceFile.CircuitBreaking?, at key: String, reader: ConfigReader
    ) throws(ServiceRegistry.ConfigurationError) -> CircuitBreaker.Policy? {
        let changes: ServiceFile.CircuitBreakerChanges
        switch entry {
        case nil: return nil
        case .enabled(let enabled)?: return enabled ? CircuitBreaker.Policy() : nil
        case .changed(let given)?: changes = given
        }
        let file = reader.file
        var policy = CircuitBreaker.Policy()
        if let count = changes.failuresToOpen {
            guard (1...1000).contains(count) else {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(key).failuresToOpen", problem: "must be a whole number from 1 to 1000")
            }
            policy.failuresToOpen = count
        }
        if let seconds = changes.coolDownSeconds {
            guard seconds > 0, seconds <= 3600 else {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(key).coolDownSeconds", problem: "must be a number of seconds above 0, at most 3600")
            }
            policy.coolDown = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        if let probes = changes.probes {
            guard (1...100).contains(probes) else {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(key).probes", problem: "must be a whole number from 1 to 100")
            }
            policy.probes = probes
        }
        if let names = changes.counted {
            policy.counted = []
            for (index, given) in names.enumerated() {
                let name = try reader.substitute(given, at: "\(key).counted[\(index)]")
                guard let failure = CircuitBreaker.Policy.Failure(rawValue: name) else {
                    let known = CircuitBreaker.Policy.Failure.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ServiceRegistry.ConfigurationError(file: file, key: "\(key).counted[\(index)]", problem: "must be one of: \(known)")
                }
                policy.counted.insert(failure)
            }
        }
        if let codes = changes.serverErrorStatuses {
            for (index, code) in codes.enumerated() where !(500...599).contains(code) {
                throw ServiceRegistry.ConfigurationError(file: file, key: "\(key).serverErrorStatuses[\(index)]", problem: "must be a server error status (500–599)")
            }
            policy.serverErrorStatuses = Set(codes)
        }
        return policy
    }

    /// A delay in seconds: from 0 to an hour.
    private static func delay(_ seconds: Double?, _ key: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> Duration? {
        guard let seconds else { return nil }
        guard seconds >= 0, seconds <= 3600 else {
            throw ServiceRegistry.ConfigurationError(file: reader.file, key: "retry.\(key)", problem: "must be a number of seconds from 0 to 3600")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
