import AIFNetworking
import Foundation

/// An article of the backend's catalogue, as the backend sends it and this server passes it on.
struct Goods: Codable, Sendable {
    var id: Int
    var title: String
    var priceCents: Int
}

/// The backend this server calls: one environment at the URL it was started with. Its members
/// are stored, not computed: each load reads them as it resolves the service.
struct CatalogueBackend: AIFNetworking.Service {
    let name: ServiceName = "catalogue"
    let decoder: (any ContentDecoder)? = FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase)
    /// Five failures in a row and the backend is left alone for five seconds: this server's
    /// requests then fail at once instead of each waiting for its timeouts.
    let circuitBreaker: CircuitBreaker.Policy? = CircuitBreaker.Policy(failuresToOpen: 5, coolDown: .seconds(5))
    let environments: [ServiceEnvironment.Name: ServiceEnvironment]

    init(baseURL: URL) {
        environments = [.online: ServiceEnvironment(baseURL: baseURL, apiVersion: "v1")]
    }
}

extension Endpoint where Content == Goods {
    /// One article, kept a minute in the cache (on disk when the server was given a folder).
    static let goodsDetail = Endpoint(service: "catalogue", path: "goods/{id}", cachePolicy: .lifetime(.seconds(60)))
}
