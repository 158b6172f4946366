public import Foundation

extension HTTPRequest {
    /// How the transport reaches a server beyond what the URL says: over a Unix-domain socket,
    /// to another address than the host name resolves to, with a client certificate, trusting
    /// a private certificate authority or pinned keys.
    ///
    /// A transport has one (``CurlTransport/Configuration/connection``) for every request; a
    /// request's own (``HTTPRequest/connection``) adds to it: its socket and certificate replace
    /// the transport's when set, its host overrides come before the transport's. A service
    /// environment can hold one, which its requests carry.
    ///
    /// ```swift
    /// // Docker's API, on its socket: the URL's host only names the server.
    /// var request = HTTPRequest(url: URL(string: "http://docker/v1.43/containers/json")!)
    /// request.connection = .unixSocket("/var/run/docker.sock")
    /// ```
    ///
    /// Connections are reused only between requests that reach the server the same way.
    public struct Connection: Sendable, Hashable {
        /// Talk HTTP (or HTTPS) over the Unix-domain socket at this path instead of TCP; `nil`
        /// for TCP. The URL's host still names the server: it is the `Host` header, and the
        /// name TLS verifies.
        public var unixSocketPath: String?
        /// Host names whose connections go to another address: the first that matches a
        /// request's host and port applies.
        public var hostOverrides: [HostOverride]
        /// The certificate presented to a TLS server that asks for one (mutual TLS); `nil` for
        /// none.
        public var clientCertificate: ClientCertificate?
        /// The certificate authorities the server's certificate must chain to — a private CA —
        /// instead of the transport's (``CurlTransport/TLS/certificateAuthorities``, the
        /// system's store by default); `nil` for the transport's.
        public var certificateAuthorities: CurlTransport.CertificateAuthorities?
        /// Public-key pins the server's key must match, on top of the chain's check, instead of
        /// the transport's; none (the transport's) by default.
        public var pinnedPublicKeys: [CurlTransport.PublicKeyPin]

        /// Creates connection settings; by default, a TCP connection to the address the URL's
        /// host resolves to, without a client certificate, trusting what the transport trusts.
        ///
        /// - Parameters:
        ///   - unixSocketPath: A Unix-domain socket to talk over, or `nil` for TCP.
        ///   - hostOverrides: Host names connected to other addresses; none by default.
        ///   - clientCertificate: A client certificate, or `nil`.
        ///   - certificateAuthorities: A private CA (a PEM file or bytes), or `nil` for the transport's.
        ///   - pinnedPublicKeys: Pins, or none for the transport's.
        public init(
            unixSocketPath: String? = nil, hostOverrides: [HostOverride] = [], clientCertificate: ClientCertificate? = nil,
            certificateAuthorities: CurlTransport.CertificateAuthorities? = nil, pinnedPublicKeys: [CurlTransport.PublicKeyPin] = []
        ) {
            self.unixSocketPath = unixSocketPath
            self.hostOverrides = hostOverrides
            self.clientCertificate = clientCertificate
            self.certificateAuthorities = certificateAuthorities
            self.pinnedPublicKeys = pinnedPublicKeys
        }

        /// Whether these settings say whom to trust (a CA or pins).
        var setsTrust: Bool {
            certificateAuthorities != nil || !pinnedPublicKeys.isEmpty
        }

        /// Over the Unix-domain socket at `path`.
        ///
        /// - Parameter path: The socket's path.
        /// - Returns: The settings.
        public static func unixSocket(_ path: String) -> Connection {
            Connection(unixSocketPath: path)
        }

        /// Whether these settings change nothing: TCP, no overrides, no certificate, the
        /// transport's trust.
        public var isDefault: Bool {
            unixSocketPath == nil && hostOverrides.isEmpty && clientCertificate == nil && !setsTrust
        }

        /// These settings on top of `defaults`: this socket, certificate, CA and pins where set,
        /// else the defaults'; these host overrides, then the defaults'.
        ///
        /// - Parameter defaults: The settings underneath (the transport's).
        /// - Returns: The settings in force.
        public func adding(to defaults: Connection) -> Connection {
            Connection(
                unixSocketPath: unixSocketPath ?? defaults.unixSocketPath,
                hostOverrides: hostOverrides + defaults.hostOverrides,
                clientCertificate: clientCertificate ?? defaults.clientCertificate,
                certificateAuthorities: certificateAuthorities ?? defaults.certificateAuthorities,
                pinnedPublicKeys: pinnedPublicKeys.isEmpty ? defaults.pinnedPublicKeys : pinnedPublicKeys
            )
        }

        /// What of these settings may follow a redirect to another origin: the host overrides,
        /// which name their hosts. A socket, a client certificate and a private trust were given
        /// for the server first asked, and are not taken to another.
        var forAnotherOrigin: Connection? {
            hostOverrides.isEmpty ? nil : Connection(hostOverrides: hostOverrides)
        }

        /// Why these settings cannot be used, or `nil` when they can.
        package var problem: String? {
            if let path = unixSocketPath {
                if path.isEmpty { return "the Unix socket path is empty" }
                // sun_path holds 108 bytes with the terminating NUL.
                if path.utf8.count > 107 {
                    return "the Unix socket path \(path.debugDescription) is \(path.utf8.count) bytes long; a socket address holds at most 107"
                }
                if path.utf8.contains(0) { return "the Unix socket path holds a NUL byte" }
            }
            for override in hostOverrides {
                if let problem = override.problem { return problem }
            }
            switch certificateAuthorities {
            case .file(let path)? where path.isEmpty: return "the certificate authorities' file path is empty"
            case .pem(let bytes)? where bytes.isEmpty: return "the certificate authorities' PEM is empty"
            default: break
            }
            return clientCertificate?.problem
        }
    }

    /// Connects a host name (and port) to another address and port, as libcurl's `--connect-to`:
    /// the request still names the original host — in its `Host` header, in TLS's server name
    /// and in the certificate check — while the connection goes elsewhere. For staging servers
    /// reached under production names, and for tests.
    ///
    /// ```swift
    /// // api.example.com's requests go to a staging address; TLS still checks api.example.com.
    /// HTTPRequest.HostOverride(host: "api.example.com", connectingTo: "10.0.4.12", atPort: 8443)
    /// ```
    public struct HostOverride: Sendable, Hashable, CustomStringConvertible {
        /// The host name (or address) requests are addressed to, compared without regard to case.
        public var host: String
        /// The port requests are addressed to, or `nil` for any port.
        public var port: Int?
        /// The host name or IP address to connect to instead (an IPv6 address without brackets).
        public var address: String
        /// The port to connect to instead, or `nil` for the request's own.
        public var connectPort: Int?

        /// Creates an override.
        ///
        /// - Parameters:
        ///   - host: The host name requests are addressed to.
        ///   - port: Only requests to this port; `nil` (the default) for any.
        ///   - address: The host name or address to connect to instead.
        ///   - connectPort: The port to connect to; `nil` (the default) for the request's.
        public init(host: String, port: Int? = nil, connectingTo address: String, atPort connectPort: Int? = nil) {
            self.host = host
            self.port = port
            self.address = address
            self.connectPort = connectPort
        }

        /// `host:port → address:port`, with `*` for any port and the request's.
        public var description: String {
            "\(host):\(port.map(String.init) ?? "*") → \(address):\(connectPort.map(String.init) ?? "*")"
        }

        /// libcurl's notation, `HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT` (an empty part for
        /// any, an IPv6 address in brackets).
        package var curlNotation: String {
            func bracketed(_ name: String) -> String { name.contains(":") ? "[\(name)]" : name }
            return "\(bracketed(host)):\(port.map(String.init) ?? ""):\(bracketed(address)):\(connectPort.map(String.init) ?? "")"
        }

        /// Why the override cannot be used, or `nil` when it can.
        package var problem: String? {
            func isName(_ text: String) -> Bool {
                !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "[") && $0 != UInt8(ascii: "]") }
            }
            if !isName(host) { return "the host override \(description) has no valid host name to match" }
            if !isName(address) { return "the host override \(description) has no valid address to connect to" }
            for port in [port, connectPort].compactMap({ $0 }) where !(1...65535).contains(port) {
                return "the host override \(description) has the port \(port), outside 1–65535"
            }
            return nil
        }
    }

    /// A client certificate and its private key, in PEM, presented to TLS servers that ask for
    /// one. Its description names the files, never the key.
    ///
    /// ```swift
    /// let identity = HTTPRequest.ClientCertificate(
    ///     certificate: .file(path: "/etc/shop/client.pem"),
    ///     privateKey: .file(path: "/etc/shop/client.key"))
    /// ```
    public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible {
        /// Where PEM text comes from.
        public enum Source: Sendable, Hashable {
            /// A PEM file at this path, read when a connection is made.
            case file(path: String)
            /// PEM bytes held in memory.
            case pem(Data)
        }

        /// The certificate, followed by any intermediate certificates the server needs to build
        /// the chain.
        public var certificate: Source
        /// The private key, or `nil` when it follows the certificate in the same PEM.
        public var privateKey: Source?
        /// The passphrase of an encrypted key, or `nil` for a key in clear.
        public var passphrase: Secret?

        /// Creates a client certificate.
        ///
        /// - Parameters:
        ///   - certificate: The certificate (PEM).
        ///   - privateKey: Its key (PEM); `nil` (the default) when the certificate's PEM holds it.
        ///   - passphrase: The key's passphrase, when the key is encrypted.
        public init(certificate: Source, privateKey: Source? = nil, passphrase: Secret? = nil) {
            self.certificate = certificate
            self.privateKey = privateKey
            self.passphrase = passphrase
        }

        /// Where the certificate and key come from: file paths, or "in memory".
        public var description: String {
            func name(_ source: Source) -> String {
                switch source {
                case .file(let path): path
                case .pem(let data): "\(data.count) bytes of PEM in memory"
                }
            }
            var text = "client certificate \(name(certificate))"
            if let privateKey { text += " with the key \(name(privateKey))" }
            if passphrase != nil { text += " (encrypted)" }
            return text
        }

        /// Why the certificate cannot be used as given, or `nil` when libcurl may try it.
        package var problem: String? {
            for (part, source) in [("certificate", Optional(certificate)), ("private key", privateKey)] {
                switch source {
                case .file(let path)? where path.isEmpty: return "the client \(part)'s file path is empty"
                case .pem(let data)? where data.isEmpty: return "the client \(part)'s PEM is empty"
                default: continue
                }
            }
            return nil
        }
    }
}
