import AIFNetworking
import Foundation

// What the manager clients of TransportBench and TransportProfile share.

/// The benchmark's small JSON, decoded.
public struct BenchCatalogue: Decodable, Sendable {
    public struct Item: Decodable, Sendable {
        public var id: Int
        public var title: String
        public var priceCents: Int
        public var inStock: Bool
    }

    public var page: Int
    public var pageSize: Int
    public var total: Int
    public var items: [Item]
}

/// The benchmark server as a service: AIF-HMAC signed (the server ignores the signature; the
/// cost of making it is what is measured), snake_case keys.
public struct BenchService: Service {
    public let environments: [EnvironmentName: ServiceEnvironment]

    /// A service at `baseURL`.
    public init(baseURL: URL) {
        environments = [
            .online: ServiceEnvironment(baseURL: baseURL, credentials: SigningCredentials(publicKey: "bench-public", privateKey: Secret("bench-private-key")))
        ]
    }

    public var name: ServiceName { "bench" }
    public var decoder: (any ContentDecoder)? { FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase) }
}

/// One endpoint: a signed GET of the small JSON.
public final class BenchCatalogueManager: APIManager<BenchCatalogue>, @unchecked Sendable {
    override public var serviceName: ServiceName { "bench" }
    override public var methodName: String { "small.json" }
}

