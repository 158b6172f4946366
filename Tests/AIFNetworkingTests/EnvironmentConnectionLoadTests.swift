@testable import TestSupport
import AIFNetworking
import AIFNetworkingTesting
import Foundation
import Testing

/// Environments that reach their servers in other ways than TCP to a resolved name, loaded
/// through the whole stack (config file, registry, manager, engine, transport) against real
/// servers.
@Suite("Service environments over a Unix socket, a host override, mutual TLS")
struct EnvironmentConnectionLoadTests {
    /// A registry holding `service`, read from its config JSON.
    func registry(_ json: String, variables: [String: String] = [:]) throws -> ServiceRegistry {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/tmp/aif-tests/sidecar.json", environment: variables))
        return registry
    }

    func load(_ path: String, from registry: ServiceRegistry, transport: CurlTransport) async throws -> APIResponse<NoContent> {
        let proxy = APIProxy(transport: transport)
        return try await APIManager<NoContent>(Endpoint(service: "sidecar", path: path), proxy: proxy, registry: registry, cache: ResponseCache()).load()
    }

    @Test func aSidecarOnASocket() async throws {
        let server = try await ConnectionServers.unixSocket()
        let registry = try registry(#"""
            {"name": "sidecar", "signing": {"scheme": "none"}, "retry": false,
             "environments": {"online": {"baseURL": "http://sidecar", "unixSocket": "${SOCKET}"}}}
            """#, variables: ["SOCKET": server.unixSocketPath ?? ""])
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await load("authority", from: registry, transport: transport)
        #expect(String(decoding: response.data, as: UTF8.self) == "sidecar")
    }

    @Test func aProductionNameOnAStagingAddressWithAClientCertificate() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let certificates = try TestCertificates.processCertificates.get()
        let registry = try registry(#"""
            {"name": "sidecar", "signing": {"scheme": "none"}, "retry": false,
             "environments": {"online": {"baseURL": "https://api.aif.test",
               "connectTo": {"api.aif.test:443": "127.0.0.1:${PORT}"},
               "clientCertificate": {"certificate": "${CERT}", "key": "${KEY}", "passphrase": "${PASS}"}}}}
            """#, variables: [
                "PORT": "\(server.port)", "CERT": certificates.clientCertificatePath, "KEY": certificates.encryptedClientKeyPath,
                "PASS": TestCertificates.clientKeyPassphrase,
            ])
        let transport = makeTransport { $0.tls.certificateAuthorities = .file(path: certificates.caPath) }
        defer { transport.shutdown() }
        let response = try await load("authority", from: registry, transport: transport)
        #expect(String(decoding: response.data, as: UTF8.self) == "api.aif.test")
        // The same environment without its certificate: the server's refusal, named.
        let bare = try self.registry(#"""
            {"name": "sidecar", "signing": {"scheme": "none"}, "retry": false,
             "environments": {"online": {"baseURL": "https://api.aif.test", "connectTo": {"api.aif.test:443": "127.0.0.1:\#(server.port)"}}}}
            """#)
        let error = await #expect(throws: APIError.self) { try await load("authority", from: bare, transport: transport) }
        #expect("\(error.map(String.init(describing:)) ?? "")".contains("requires a client certificate"))
    }

    /// A private CA and the server's pin in the environment's config — the transport trusting
    /// only the system's store — and the failure of a name the certificate does not hold.
    @Test func anEnvironmentTrustsItsPrivateCAAndPin() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let certificates = try TestCertificates.processCertificates.get()
        func environment(_ host: String, pin: String) throws -> ServiceRegistry {
            try registry(#"""
                {"name": "sidecar", "signing": {"scheme": "none"}, "retry": false,
                 "environments": {"online": {"baseURL": "https://\#(host)",
                   "connectTo": {"\#(host):443": "127.0.0.1:\#(server.port)"},
                   "clientCertificate": {"certificate": "${CERT}", "key": "${KEY}"},
                   "trust": {"certificateAuthorities": "${CA}", "pinnedPublicKeys": ["sha256//\#(pin)"]}}}}
                """#, variables: ["CERT": certificates.clientCertificatePath, "KEY": certificates.clientKeyPath, "CA": certificates.caPath])
        }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await load("authority", from: try environment("api.aif.test", pin: certificates.serverKeyPin), transport: transport)
        #expect(String(decoding: response.data, as: UTF8.self) == "api.aif.test")

        let otherPin = await #expect(throws: APIError.self) {
            try await load("authority", from: try environment("api.aif.test", pin: certificates.otherKeyPin), transport: transport)
        }
        #expect((otherPin?.underlyingError as? TransportError)?.tlsReason == .pinnedKeyMismatch)
        let otherName = await #expect(throws: APIError.self) {
            try await load("authority", from: try environment("shop.aif.test", pin: certificates.serverKeyPin), transport: transport)
        }
        #expect(otherName?.message.contains("the server certificate was issued for another host name") == true, "\(String(describing: otherName))")
    }
}

