@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Logging
import Testing

@Suite("CurlTransport: TLS and HTTP/2")
struct CurlTransportTLSTests {
    @Test func anUnknownCertificateAuthorityIsRejectedByDefault() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport()
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: servers.tls.url("bytes/10", secure: true)))
        }
        #expect(error?.code == .tlsFailure)
        #expect(error?.tlsReason == .certificateNotTrusted)
        #expect(error?.description.contains("not trusted") == true)
    }

    @Test func theGeneratedCertificateAuthorityIsAcceptedFromAFile() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport { $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath) }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: servers.tls.url("bytes/10", secure: true)))
        #expect(response.body.count == 10)
        #expect(response.metrics.tlsHandshake > .zero)
    }

    @Test func theGeneratedCertificateAuthorityIsAcceptedFromMemory() async throws {
        let servers = try await TestServers.shared()
        let pem = try Data(contentsOf: URL(fileURLWithPath: servers.certificates.caPath))
        let transport = makeTransport { $0.tls.certificateAuthorities = .pem(pem) }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: servers.tls.url("bytes/10", secure: true)))
        #expect(response.statusCode == 200)
    }

    @Test func theRightPinIsAccepted() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport {
            $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath)
            $0.tls.pinnedPublicKeys = [CurlTransport.PublicKeyPin(sha256Base64: servers.certificates.otherKeyPin), CurlTransport.PublicKeyPin(sha256Base64: servers.certificates.serverKeyPin)]
        }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: servers.tls.url("bytes/10", secure: true)))
        #expect(response.statusCode == 200)
    }

    @Test func aWrongPinIsRejected() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport {
            $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath)
            $0.tls.pinnedPublicKeys = [CurlTransport.PublicKeyPin(sha256Base64: servers.certificates.otherKeyPin)]
        }
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: servers.tls.url("bytes/10", secure: true)))
        }
        #expect(error?.code == .tlsFailure)
        #expect(error?.tlsReason == .pinnedKeyMismatch)
    }

    @Test func turningVerificationOffWorksAndIsLogged() async throws {
        let servers = try await TestServers.shared()
        let messages = Locked([(Logger.Level, String)]())
        let transport = makeTransport {
            $0.tls.certificateVerification = .dangerouslyDisabledForDevelopmentOnly
            $0.logger = Logger(label: "test") { _ in CapturingLogHandler(messages: messages) }
        }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: servers.tls.url("bytes/10", secure: true)))
        #expect(response.statusCode == 200)
        #expect(messages.withLock { $0 }.contains { $0.0 == .warning && $0.1.contains("DISABLED") })
    }

    @Test func http2IsNegotiatedOverTLSAndMultiplexesOneConnection() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport { $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath) }
        defer { transport.shutdown() }
        let first = try await transport.send(HTTPRequest(url: servers.http2.url("whoami", secure: true)))
        #expect(first.httpVersion == .http2)
        let ports = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let response = try await transport.send(HTTPRequest(url: servers.http2.url("whoami", secure: true)))
                    #expect(response.httpVersion == .http2)
                    return String(decoding: response.body, as: UTF8.self)
                }
            }
            var ports = Set<String>()
            for try await port in group { ports.insert(port) }
            return ports
        }
        #expect(ports == [String(decoding: first.body, as: UTF8.self)], "all 20 requests shared the first connection")
    }

    @Test func http2CarriesLargeBodiesBothWays() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport { $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath) }
        defer { transport.shutdown() }
        let payload = Data(TestRoutes.pattern(count: 3 << 20))
        let response = try await transport.send(HTTPRequest(method: .post, url: servers.http2.url("echo", secure: true), body: .bytes(payload)))
        #expect(response.httpVersion == .http2)
        #expect(response.body == payload)
    }

    @Test func http1CanBeForcedAgainstAnHTTP2Server() async throws {
        let servers = try await TestServers.shared()
        let transport = makeTransport {
            $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath)
            $0.httpVersion = .http1Only
        }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: servers.http2.url("bytes/10", secure: true)))
        #expect(response.httpVersion == .http1_1)
    }
}
