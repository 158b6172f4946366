import Foundation

extension ResponseCache {
    /// What a cached response is filed under: the service, its environment, the request type, the
    /// path and the parameters as the caller gave them (reformed, before the service's
    /// common parameters and before signing — a signature, nonce or timestamp would make every
    /// key unique); and the cache version and content type's shape the response was stored for
    /// (see ``ResponseCache/Policy/version``).
    public struct Key: Sendable, Hashable, CustomStringConvertible {
        /// The service's name.
        public let service: ServiceName
        /// The environment the response came from.
        public let environment: ServiceEnvironment.Name
        /// The request type.
        public let method: HTTPMethod
        /// The path, as the manager declares it (`goods/{id}`).
        public let path: String
        /// The parameters, sorted and percent-encoded: `id=7&page=2`.
        public let parameters: String
        /// The cache version it was stored under: the service's ``/AIFServices/Service/cacheVersion`` and the
        /// endpoint's ``ResponseCache/Policy/version``, as `SERVICE.ENDPOINT` (`0.0` for both unset).
        public let version: String
        /// The fingerprint of the content type's `Decodable` shape, or `""` when the key is not
        /// tied to a type.
        public let schema: String

        /// Creates a key.
        ///
        /// - Parameters:
        ///   - service: The service's name.
        ///   - environment: The environment.
        ///   - method: The request type.
        ///   - path: The path under the base URL and version (`goods/{id}`).
        ///   - parameters: The parameters; their order does not matter.
        ///   - version: The cache version; `0.0` by default.
        ///   - schema: The content type's fingerprint; none by default.
        public init(
            service: ServiceName, environment: ServiceEnvironment.Name, method: HTTPMethod, path: String, parameters: Parameters, version: String = "0.0",
            schema: String = ""
        ) {
            self.service = service
            self.environment = environment
            self.method = method
            self.path = path
            self.parameters = RequestGenerator.flatten(parameters, arrays: .brackets)
                .map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }
                .joined(separator: "&")
            self.version = version
            self.schema = schema
        }

        /// `shop/online GET goods?page=2` (without the version and fingerprint).
        public var description: String {
            "\(service)/\(environment) \(method) \(path)" + (parameters.isEmpty ? "" : "?" + parameters)
        }

        /// The whole key as one string, unique per key: what a persistent store files it under.
        public var storageKey: String {
            "\(description) v\(version) \(schema)"
        }
    }
}
