@testable import AIFServices
import Foundation
import Testing

@Suite("Service environments: sockets, host overrides and client certificates from config")
struct EnvironmentConnectionTests {
    func parse(_ environment: String, variables: [String: String] = [:]) throws -> ServiceEnvironment? {
        let json = #"{"name": "x", "environments": {"online": \#(environment)}}"#
        return try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/etc/aif/Configs/x.json", environment: variables).environments[.online]
    }

    func problem(_ environment: String, variables: [String: String] = [:]) -> String? {
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse(environment, variables: variables) }
        return error.map { "\($0.key ?? "-") \($0.problem)" }
    }

    @Test func anEnvironmentWithoutTheKeysHasNoConnectionSettings() throws {
        #expect(try parse(#"{"baseURL": "https://a.test"}"#)?.connection == nil)
    }

    @Test func aSocketPathIsReadRelativeToTheFile() throws {
        #expect(try parse(#"{"baseURL": "http://docker", "unixSocket": "/var/run/docker.sock"}"#)?.connection == .unixSocket("/var/run/docker.sock"))
        #expect(try parse(#"{"baseURL": "http://sidecar", "unixSocket": "run/sidecar.sock"}"#)?.connection == .unixSocket("/etc/aif/Configs/run/sidecar.sock"))
        #expect(try parse(#"{"baseURL": "http://sidecar", "unixSocket": "${SOCK}"}"#, variables: ["SOCK": "/run/s.sock"])?.connection == .unixSocket("/run/s.sock"))
    }

    @Test func hostOverridesAreReadWithOrWithoutPorts() throws {
        let connection = try parse(#"""
            {"baseURL": "https://api.shop.example", "connectTo": {
              "api.shop.example": "10.0.4.12", "api.shop.example:443": "[fd00::12]:8443", "cdn.shop.example:80": "127.0.0.1:${PORT}"}}
            """#, variables: ["PORT": "8080"])?.connection
        #expect(connection?.hostOverrides == [
            HTTPRequest.HostOverride(host: "api.shop.example", port: 443, connectingTo: "fd00::12", atPort: 8443),
            HTTPRequest.HostOverride(host: "api.shop.example", connectingTo: "10.0.4.12"),
            HTTPRequest.HostOverride(host: "cdn.shop.example", port: 80, connectingTo: "127.0.0.1", atPort: 8080),
        ])
    }

    @Test func aClientCertificateIsReadFromFilesOrVariables() throws {
        let fromFiles = try parse(#"""
            {"baseURL": "https://a.test", "clientCertificate": {"certificate": "certs/client.pem", "key": "/secure/client.key", "passphrase": "${PASS}"}}
            """#, variables: ["PASS": "open sesame"])?.connection?.clientCertificate
        #expect(fromFiles == HTTPRequest.ClientCertificate(
            certificate: .file(path: "/etc/aif/Configs/certs/client.pem"), privateKey: .file(path: "/secure/client.key"), passphrase: Secret("open sesame")))
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        let fromVariables = try parse(#"{"baseURL": "https://a.test", "clientCertificate": {"certificate": "${CERT}"}}"#, variables: ["CERT": pem])?.connection?.clientCertificate
        #expect(fromVariables == HTTPRequest.ClientCertificate(certificate: .pem(Data(pem.utf8))))
    }

    @Test func aTrustIsReadFromAFileOrAVariableWithItsPins() throws {
        let pin = Data(repeating: 7, count: 32).base64EncodedString()
        let fromFile = try parse(#"{"baseURL": "https://a.test", "trust": {"certificateAuthorities": "certs/ca.pem", "pinnedPublicKeys": ["sha256//\#(pin)", "\#(pin)"]}}"#)?.connection
        #expect(fromFile?.certificateAuthorities == .file(path: "/etc/aif/Configs/certs/ca.pem"))
        #expect(fromFile?.pinnedPublicKeys == [CurlTransport.PublicKeyPin(sha256Base64: pin), CurlTransport.PublicKeyPin(sha256Base64: pin)])
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        let fromVariable = try parse(#"{"baseURL": "https://a.test", "trust": {"certificateAuthorities": "${CA}"}}"#, variables: ["CA": pem])?.connection
        #expect(fromVariable?.certificateAuthorities == .pem(Data(pem.utf8)))
        #expect(fromVariable?.pinnedPublicKeys == [])

        #expect(problem(#"{"baseURL": "https://a.test", "trust": {"pinnedPublicKeys": ["sha256//abc"]}}"#)
            == "environments.online.trust.pinnedPublicKeys[0] must be a SHA-256 public-key pin: sha256// and the base64 of 32 bytes (openssl … | openssl dgst -sha256 -binary | base64)")
        #expect(problem(#"{"baseURL": "https://a.test", "trust": {"certificateAuthorities": ""}}"#) == "environments.online.trust.certificateAuthorities is empty")
        #expect(problem(#"{"baseURL": "https://a.test", "trust": {"cacert": "ca.pem"}}"#)
            == "environments.online.trust.cacert is not a known key; expected one of: certificateAuthorities, pinnedPublicKeys")
    }

    @Test func whatCannotBeUsedIsNamedByItsKey() {
        #expect(problem(#"{"baseURL": "http://a.test", "unixSocket": ""}"#) == "environments.online.unixSocket the Unix socket path is empty")
        #expect(problem(#"{"baseURL": "http://a.test", "connectTo": {"a.test:http": "10.0.0.1"}}"#)
            == #"environments.online.connectTo.a.test:http the host "a.test:http" has a port that is not a number"#)
        #expect(problem(#"{"baseURL": "http://a.test", "connectTo": {"a.test": "10.0.0.1:99999"}}"#)
            == "environments.online.connectTo.a.test the host override a.test:* → 10.0.0.1:99999 has the port 99999, outside 1–65535")
        #expect(problem(#"{"baseURL": "http://a.test", "connectTo": {"a.test": "[fd00::1"}}"#)
            == #"environments.online.connectTo.a.test the address "[fd00::1" opens an IPv6 address with [ and does not close it"#)
        #expect(problem(#"{"baseURL": "https://a.test", "clientCertificate": {"key": "k.pem"}}"#)?.hasPrefix("environments.online.clientCertificate") == true)
        #expect(problem(#"{"baseURL": "https://a.test", "clientCertificate": {"certificate": "c.pem", "pasphrase": "x"}}"#)
            == "environments.online.clientCertificate.pasphrase is not a known key; expected one of: certificate, key, passphrase")
    }

    @Test func secretsWrittenInTheFileAreRefused() {
        #expect(problem(#"{"baseURL": "https://a.test", "clientCertificate": {"certificate": "c.pem", "passphrase": "hunter22"}}"#)
            == #"environments.online.clientCertificate.passphrase must name an environment variable (write "${NAME}"): a config file never holds a secret in clear"#)
        let problemText = problem(#"{"baseURL": "https://a.test", "clientCertificate": {"certificate": "c.pem", "key": "-----BEGIN PRIVATE KEY-----\nMIG\n-----END PRIVATE KEY-----"}}"#)
        #expect(problemText?.hasPrefix("environments.online.clientCertificate.key holds PEM text") == true)
        #expect(problemText?.contains("MIG") == false)
    }

    @Test func requestsOfTheEnvironmentCarryItsSettings() throws {
        let json = #"{"name": "docker", "environments": {"online": {"baseURL": "http://docker", "apiVersion": "v1.43", "unixSocket": "/var/run/docker.sock"}}}"#
        let registry = ServiceRegistry()
        registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/etc/docker.json", environment: [:]))
        let resolved = try registry.resolve("docker")
        let request = try resolved.makeRequest(path: "containers/json", method: .get)
        #expect(request.connection == .unixSocket("/var/run/docker.sock"))
        #expect(request.curlCommand() == "curl \\\n  --unix-socket '/var/run/docker.sock' \\\n  'http://docker/v1.43/containers/json'")
    }

    @Test func theCurlCommandNamesCertificatesAndHidesThePassphrase() {
        var request = HTTPRequest(url: URL(string: "https://api.shop.example/v1/goods")!)
        request.connection = HTTPRequest.Connection(
            hostOverrides: [HTTPRequest.HostOverride(host: "api.shop.example", port: 443, connectingTo: "10.0.4.12", atPort: 8443)],
            clientCertificate: HTTPRequest.ClientCertificate(certificate: .file(path: "/etc/client.pem"), privateKey: .pem(Data(count: 241)), passphrase: Secret("open sesame")))
        let command = request.curlCommand()
        #expect(command == """
            curl \\
              --connect-to 'api.shop.example:443:10.0.4.12:8443' \\
              --cert '/etc/client.pem' \\
              --key '<241 bytes of PEM held in memory>' \\
              --pass '***' \\
              'https://api.shop.example/v1/goods'
            """)
        #expect(request.curlCommand(revealingSecrets: true).contains("--pass 'open sesame'"))
    }

    @Test func theCurlCommandNamesTheCAAndThePins() {
        var request = HTTPRequest(url: URL(string: "https://api.shop.example/v1/goods")!)
        request.connection = HTTPRequest.Connection(
            certificateAuthorities: .file(path: "/etc/shop-ca.pem"),
            pinnedPublicKeys: [CurlTransport.PublicKeyPin(sha256Base64: "AAAA"), CurlTransport.PublicKeyPin(sha256Base64: "BBBB")])
        #expect(request.curlCommand() == """
            curl \\
              --cacert '/etc/shop-ca.pem' \\
              --pinnedpubkey 'sha256//AAAA;sha256//BBBB' \\
              'https://api.shop.example/v1/goods'
            """)
        request.connection?.certificateAuthorities = .pem(Data(count: 612))
        #expect(request.curlCommand().contains("--cacert '<612 bytes of PEM held in memory>'"))
    }
}
