@testable import AIFTransport
import AIFNetworkingTesting
@testable import TestSupport
import Foundation
import Testing

@Suite("CurlTransport: client certificates (mutual TLS)")
struct ClientCertificateTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.processCertificates.get()
    }

    /// A transport trusting the test CA, with `identity` as its client certificate.
    func transport(presenting identity: HTTPRequest.ClientCertificate?) -> CurlTransport {
        makeTransport {
            $0.tls.certificateAuthorities = .file(path: certificates.caPath)
            $0.connection.clientCertificate = identity
        }
    }

    var identity: HTTPRequest.ClientCertificate {
        HTTPRequest.ClientCertificate(certificate: .file(path: certificates.clientCertificatePath), privateKey: .file(path: certificates.clientKeyPath))
    }

    @Test func aCertificateTheServerTrustsIsAcceptedFromFiles() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: identity)
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("bytes/10", secure: true)))
        #expect(response.statusCode == 200)
        #expect(response.body.count == 10)
    }

    @Test func aCertificateAndKeyHeldInMemoryAreAccepted() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: nil)
        defer { transport.shutdown() }
        var request = HTTPRequest(url: server.url("bytes/10", secure: true))
        request.connection = HTTPRequest.Connection(clientCertificate: HTTPRequest.ClientCertificate(
            certificate: .pem(try Data(contentsOf: URL(fileURLWithPath: certificates.clientCertificatePath))),
            privateKey: .pem(try Data(contentsOf: URL(fileURLWithPath: certificates.clientKeyPath)))))
        let response = try await transport.send(request)
        #expect(response.statusCode == 200)
    }

    @Test func anEncryptedKeyIsOpenedWithItsPassphrase() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: HTTPRequest.ClientCertificate(
            certificate: .file(path: certificates.clientCertificatePath), privateKey: .file(path: certificates.encryptedClientKeyPath),
            passphrase: Secret(TestCertificates.clientKeyPassphrase)))
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("bytes/10", secure: true)))
        #expect(response.statusCode == 200)
    }

    @Test func aWrongPassphraseIsAnUnusableCertificateNamingTheFiles() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: HTTPRequest.ClientCertificate(
            certificate: .file(path: certificates.clientCertificatePath), privateKey: .file(path: certificates.encryptedClientKeyPath),
            passphrase: Secret("not-the-passphrase")))
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("bytes/10", secure: true)))
        }
        #expect(error?.code == .tlsFailure)
        #expect(error?.tlsReason == .clientCertificateUnusable)
        #expect(error?.detail.contains(certificates.encryptedClientKeyPath) == true, "\(String(describing: error))")
        #expect(error?.description.contains("not-the-passphrase") == false)
    }

    @Test func withoutACertificateTheErrorSaysTheServerRequiresOne() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: nil)
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("bytes/10", secure: true)))
        }
        #expect(error?.code == .tlsFailure)
        #expect(error?.tlsReason == .clientCertificateRequired, "\(String(describing: error))")
        #expect(error?.description.contains("requires a client certificate") == true)
    }

    @Test func aCertificateFromAnotherAuthorityIsRefusedByName() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: HTTPRequest.ClientCertificate(
            certificate: .file(path: certificates.rogueClientCertificatePath), privateKey: .file(path: certificates.rogueClientKeyPath)))
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("bytes/10", secure: true)))
        }
        #expect(error?.code == .tlsFailure)
        #expect(error?.tlsReason == .clientCertificateRefused, "\(String(describing: error))")
        #expect(error?.detail.contains("refused the client certificate \(certificates.rogueClientCertificatePath)") == true)
    }

    @Test func anUnreadableCertificateFileIsNamed() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let missing = certificates.directory.appending(path: "missing.pem").path
        let transport = transport(presenting: HTTPRequest.ClientCertificate(certificate: .file(path: missing), privateKey: .file(path: certificates.clientKeyPath)))
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("bytes/10", secure: true)))
        }
        #expect(error?.tlsReason == .clientCertificateUnusable)
        #expect(error?.detail.contains(missing) == true, "\(String(describing: error))")
    }

    @Test func anEmptyPEMIsRefusedBeforeConnecting() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: HTTPRequest.ClientCertificate(certificate: .pem(Data())))
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("bytes/10", secure: true)))
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.detail == "the client certificate's PEM is empty")
    }

    /// A connection made with one identity is not reused for a request with another, or with
    /// none: libcurl matches connections on the client certificate.
    @Test func aConnectionIsReusedOnlyUnderTheSameIdentity() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: nil)
        defer { transport.shutdown() }
        var withIdentity = HTTPRequest(url: server.url("whoami", secure: true))
        withIdentity.connection = HTTPRequest.Connection(clientCertificate: identity)
        let first = try await transport.send(withIdentity)
        let second = try await transport.send(withIdentity)
        #expect(second.metrics.reusedConnection)
        #expect(first.body == second.body)
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("whoami", secure: true)))
        }
        #expect(error?.tlsReason == .clientCertificateRequired)
        let third = try await transport.send(withIdentity)
        #expect(third.statusCode == 200)
    }

    @Test func theRequestsCertificateReplacesTheTransports() async throws {
        let server = try await ConnectionServers.mutualTLS()
        let transport = transport(presenting: HTTPRequest.ClientCertificate(
            certificate: .file(path: certificates.rogueClientCertificatePath), privateKey: .file(path: certificates.rogueClientKeyPath)))
        defer { transport.shutdown() }
        var request = HTTPRequest(url: server.url("bytes/3", secure: true))
        request.connection = HTTPRequest.Connection(clientCertificate: identity)
        #expect(try await transport.send(request).statusCode == 200)
    }

    @Test func theDescriptionNamesFilesAndNeverTheKey() throws {
        let inMemory = HTTPRequest.ClientCertificate(certificate: .pem(Data("-----BEGIN CERTIFICATE-----".utf8)), privateKey: .pem(Data("-----BEGIN PRIVATE KEY-----secret".utf8)), passphrase: Secret("hunter22"))
        #expect(inMemory.description == "client certificate 27 bytes of PEM in memory with the key 33 bytes of PEM in memory (encrypted)")
        #expect(identity.description == "client certificate \(certificates.clientCertificatePath) with the key \(certificates.clientKeyPath)")
        #expect(!"\(inMemory)".contains("hunter22"))
    }
}

@Suite("CurlTransport: Unix-domain sockets")
struct UnixSocketTests {
    @Test func aRequestTalksHTTPOverTheSocket() async throws {
        let server = try await ConnectionServers.unixSocket()
        let path = try #require(server.unixSocketPath)
        let transport = makeTransport()
        defer { transport.shutdown() }
        var request = HTTPRequest(url: URL(string: "http://docker/authority")!)
        request.connection = .unixSocket(path)
        let response = try await transport.send(request)
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "docker")
    }

    @Test func aTransportCanTalkOverTheSocketForEveryRequest() async throws {
        let server = try await ConnectionServers.unixSocket()
        let transport = makeTransport { $0.connection = .unixSocket(server.unixSocketPath ?? "") }
        defer { transport.shutdown() }
        for count in [1, 2, 3] {
            let response = try await transport.send(HTTPRequest(url: URL(string: "http://localhost/bytes/\(count)")!))
            #expect(response.body.count == count)
        }
    }

    /// Handles are pooled and never reset: a TCP request after a socket one must not inherit
    /// the socket, and the other way round.
    @Test func socketAndTCPRequestsAlternateOnOneTransport() async throws {
        let socketServer = try await ConnectionServers.unixSocket()
        let tcpServer = try await TestServers.shared().plain
        let transport = makeTransport { $0.connectionPool.maxConnections = 1 }
        defer { transport.shutdown() }
        for _ in 0..<3 {
            var overSocket = HTTPRequest(url: URL(string: "http://127.0.0.1:\(tcpServer.port)/bytes/4")!)
            overSocket.connection = .unixSocket(socketServer.unixSocketPath ?? "")
            // Same URL, two servers: the socket's answers, then the port's.
            #expect(try await transport.send(overSocket).body.count == 4)
            #expect(try await transport.send(HTTPRequest(url: tcpServer.url("whoami"))).statusCode == 200)
        }
    }

    @Test func aSocketRequestGoesThroughNoProxy() async throws {
        let server = try await ConnectionServers.unixSocket()
        // A proxy nobody listens on: a request through it would fail to connect.
        let transport = makeTransport { $0.proxy = .explicit("http://127.0.0.1:9") }
        defer { transport.shutdown() }
        var request = HTTPRequest(url: URL(string: "http://localhost/bytes/5")!)
        request.connection = .unixSocket(server.unixSocketPath ?? "")
        #expect(try await transport.send(request).body.count == 5)
    }

    @Test func aMissingSocketIsNamedInTheError() async throws {
        let transport = makeTransport()
        defer { transport.shutdown() }
        let path = FileManager.default.temporaryDirectory.appending(path: "aif-nobody-\(UUID().uuidString.prefix(8)).sock").path
        var request = HTTPRequest(url: URL(string: "http://localhost/bytes/5")!)
        request.connection = .unixSocket(path)
        let error = await #expect(throws: TransportError.self) { try await transport.send(request) }
        #expect(error?.code == .connectionRefused)
        #expect(error?.detail == "could not connect to the Unix socket \(path): No such file or directory")
    }

    @Test func aPathLongerThanASocketAddressIsRefused() async throws {
        let transport = makeTransport()
        defer { transport.shutdown() }
        var request = HTTPRequest(url: URL(string: "http://localhost/")!)
        request.connection = .unixSocket("/tmp/" + String(repeating: "s", count: 110))
        let error = await #expect(throws: TransportError.self) { try await transport.send(request) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.detail.contains("115 bytes long; a socket address holds at most 107") == true)
    }
}

@Suite("CurlTransport: host overrides (connect-to)")
struct HostOverrideTests {
    @Test func aProductionNameReachesALocalServerAndTLSChecksTheName() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport {
            $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath)
            $0.connection.hostOverrides = [HTTPRequest.HostOverride(host: "api.aif.test", port: 443, connectingTo: "127.0.0.1", atPort: servers.tls.port)]
        }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: URL(string: "https://api.aif.test/authority")!))
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "api.aif.test")
    }

    @Test func aNameTheCertificateDoesNotHoldIsSaidToBeAnotherHosts() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport { $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath) }
        defer { transport.shutdown() }
        var request = HTTPRequest(url: URL(string: "https://shop.aif.test/headers")!)
        request.connection = HTTPRequest.Connection(hostOverrides: [HTTPRequest.HostOverride(host: "shop.aif.test", connectingTo: "127.0.0.1", atPort: servers.tls.port)])
        let error = await #expect(throws: TransportError.self) { try await transport.send(request) }
        #expect(error?.code == .tlsFailure)
        // Trusted, but for other names: the error says so (it read "not trusted").
        #expect(error?.tlsReason == .hostNameMismatch)
        #expect(error?.description.contains("the server certificate was issued for another host name") == true, "\(String(describing: error))")
        #expect(error?.detail.contains("shop.aif.test") == true, "\(String(describing: error))")
    }

    @Test func anOverrideForAnyPortKeepsTheRequestsPort() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport()
        defer { transport.shutdown() }
        var request = HTTPRequest(url: URL(string: "http://api.aif.test:\(servers.plain.port)/bytes/7")!)
        request.connection = HTTPRequest.Connection(hostOverrides: [HTTPRequest.HostOverride(host: "API.aif.test", connectingTo: "127.0.0.1")])
        #expect(try await transport.send(request).body.count == 7)
    }

    @Test func theRequestsOverridesComeBeforeTheTransports() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport {
            // Nobody listens on port 9.
            $0.connection.hostOverrides = [HTTPRequest.HostOverride(host: "api.aif.test", connectingTo: "127.0.0.1", atPort: 9)]
        }
        defer { transport.shutdown() }
        var request = HTTPRequest(url: URL(string: "http://api.aif.test/bytes/2")!)
        request.connection = HTTPRequest.Connection(hostOverrides: [HTTPRequest.HostOverride(host: "api.aif.test", connectingTo: "127.0.0.1", atPort: servers.plain.port)])
        #expect(try await transport.send(request).body.count == 2)
        let error = await #expect(throws: TransportError.self) { try await transport.send(HTTPRequest(url: URL(string: "http://api.aif.test/bytes/2")!)) }
        #expect(error?.code == .connectionRefused)
    }

    @Test func anOverrideWithAPortOutOfRangeIsRefused() async throws {
        let transport = makeTransport()
        defer { transport.shutdown() }
        var request = HTTPRequest(url: URL(string: "http://api.aif.test/")!)
        request.connection = HTTPRequest.Connection(hostOverrides: [HTTPRequest.HostOverride(host: "api.aif.test", connectingTo: "127.0.0.1", atPort: 70000)])
        let error = await #expect(throws: TransportError.self) { try await transport.send(request) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.detail == "the host override api.aif.test:* → 127.0.0.1:70000 has the port 70000, outside 1–65535")
    }

    @Test func libcurlsNotationBracketsIPv6Addresses() {
        #expect(HTTPRequest.HostOverride(host: "api.example.com", port: 443, connectingTo: "::1", atPort: 8443).curlNotation == "api.example.com:443:[::1]:8443")
        #expect(HTTPRequest.HostOverride(host: "api.example.com", connectingTo: "10.0.0.2").curlNotation == "api.example.com::10.0.0.2:")
    }
}

@Suite("Connection settings across redirects")
struct ConnectionRedirectTests {
    @Test func anotherOriginGetsOnlyTheHostOverrides() throws {
        var request = HTTPRequest(url: URL(string: "https://api.example.com/a")!)
        let override = HTTPRequest.HostOverride(host: "cdn.example.com", connectingTo: "10.0.0.9")
        request.connection = HTTPRequest.Connection(
            unixSocketPath: "/run/api.sock", hostOverrides: [override],
            clientCertificate: HTTPRequest.ClientCertificate(certificate: .file(path: "/etc/client.pem")))
        let sameOrigin = try #require(try request.redirected(by: HTTPResponse(statusCode: 302, headers: ["Location": "/b"], url: request.url)))
        #expect(sameOrigin.connection == request.connection)
        let elsewhere = try #require(try request.redirected(by: HTTPResponse(statusCode: 302, headers: ["Location": "https://cdn.example.com/b"], url: request.url)))
        #expect(elsewhere.connection == HTTPRequest.Connection(hostOverrides: [override]))
    }
}

/// A request's own trust — a private CA, pinned keys — instead of the transport's, on the
/// transport's pooled handles: set for the requests that carry it, the transport's again for
/// the next one, and never a connection shared between the two.
@Suite("CurlTransport: a request's own trust")
struct RequestTrustTests {
    private static func trusting(_ authorities: CurlTransport.CertificateAuthorities?, pins: [String] = [], _ url: URL) -> HTTPRequest {
        var request = HTTPRequest(url: url)
        request.connection = HTTPRequest.Connection(certificateAuthorities: authorities, pinnedPublicKeys: pins.map { CurlTransport.PublicKeyPin(sha256Base64: $0) })
        return request
    }

    @Test func aPrivateCAOnTheRequestIsTrustedAndTheNextRequestGoesBackToTheSystemStore() async throws {
        let servers = try await TestServers.shared()
        // One connection and one handle: every request takes the handle the one before used.
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 1 }
        defer { transport.shutdown() }
        let url = servers.tls.url("bytes/10", secure: true)
        let pem = try Data(contentsOf: URL(fileURLWithPath: servers.certificates.caPath))
        for authorities in [CurlTransport.CertificateAuthorities.file(path: servers.certificates.caPath), .pem(pem)] {
            let trusted = try await transport.send(Self.trusting(authorities, url))
            #expect(trusted.statusCode == 200)
            // The connection the private CA accepted is not lent to a request that trusts the system's store.
            let error = await #expect(throws: TransportError.self) { try await transport.send(HTTPRequest(url: url)) }
            #expect(error?.tlsReason == .certificateNotTrusted)
        }
        #expect(try await transport.send(Self.trusting(.file(path: servers.certificates.caPath), url)).statusCode == 200)
    }

    @Test func aRequestsPinsReplaceTheTransportsAndLastForThatRequestOnly() async throws {
        let servers = try await TestServers.shared()
        let certificates = servers.certificates
        let transport = makeTransport {
            $0.connectionPool.maxConnectionsPerHost = 1
            $0.tls.certificateAuthorities = .file(path: certificates.caPath)
        }
        defer { transport.shutdown() }
        let url = servers.tls.url("bytes/10", secure: true)
        let wrong = await #expect(throws: TransportError.self) { try await transport.send(Self.trusting(nil, pins: [certificates.otherKeyPin], url)) }
        #expect(wrong?.tlsReason == .pinnedKeyMismatch)
        #expect(try await transport.send(Self.trusting(nil, pins: [certificates.serverKeyPin], url)).statusCode == 200)
        // No pins of its own: the transport's CA alone, as before.
        #expect(try await transport.send(HTTPRequest(url: url)).statusCode == 200)
    }

    @Test func anEmptyPrivateCAIsRefusedBeforeConnecting() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport()
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(Self.trusting(.pem(Data()), servers.tls.url("bytes/10", secure: true)))
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.detail == "the certificate authorities' PEM is empty")
    }

    @Test func aPrivateTrustIsNotTakenToAnotherOrigin() {
        let connection = HTTPRequest.Connection(certificateAuthorities: .file(path: "/ca.pem"), pinnedPublicKeys: [CurlTransport.PublicKeyPin(sha256Base64: "x")])
        #expect(connection.forAnotherOrigin == nil)
        #expect(!connection.isDefault)
        let merged = HTTPRequest.Connection().adding(to: connection)
        #expect(merged.certificateAuthorities == .file(path: "/ca.pem"))
        #expect(merged.pinnedPublicKeys.count == 1)
    }
}

