import Foundation

extension ServiceRegistry.ConfiguredService {
    /// An environment's `unixSocket`, `connectTo`, `clientCertificate` and `trust`, or `nil` when
    /// it has none of them.
    static func connection(_ entry: ServiceFile.Environment, at path: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> HTTPRequest.Connection? {
        guard entry.unixSocket != nil || entry.connectTo != nil || entry.clientCertificate != nil || entry.trust != nil else { return nil }
        var connection = HTTPRequest.Connection()
        if let socket = entry.unixSocket {
            let key = "\(path).unixSocket"
            let path = try reader.substitute(socket, at: key)
            connection.unixSocketPath = path.isEmpty ? path : reader.relativeToFile(path)
            if let problem = connection.problem { throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: problem) }
        }
        if let connectTo = entry.connectTo {
            var overrides: [HTTPRequest.HostOverride] = []
            for (source, target) in connectTo {
                let key = "\(path).connectTo.\(source)"
                overrides.append(try hostOverride(from: try reader.substitute(source, at: key), to: try reader.substitute(target, at: key), at: key, reader: reader))
            }
            // An override naming its port before one for any port of the same host; otherwise
            // in the order of the names, so that the file's order (which JSON does not keep)
            // never matters.
            connection.hostOverrides = overrides.sorted { ($0.host, $0.port == nil ? 1 : 0, $0.port ?? 0) < ($1.host, $1.port == nil ? 1 : 0, $1.port ?? 0) }
        }
        if let section = entry.clientCertificate?.section {
            connection.clientCertificate = try clientCertificate(section, at: "\(path).clientCertificate", reader: reader)
        }
        if let trust = entry.trust?.section {
            if let written = trust.certificateAuthorities {
                switch try pem(written, at: "\(path).trust.certificateAuthorities", reader: reader) {
                case .file(let file): connection.certificateAuthorities = .file(path: file)
                case .pem(let bytes): connection.certificateAuthorities = .pem(bytes)
                }
            }
            for (index, written) in (trust.pinnedPublicKeys ?? []).enumerated() {
                let key = "\(path).trust.pinnedPublicKeys[\(index)]"
                let text = try reader.substitute(written, at: key)
                let digest = text.hasPrefix("sha256//") ? String(text.dropFirst("sha256//".count)) : text
                guard let bytes = Data(base64Encoded: digest), bytes.count == 32 else {
                    throw ServiceRegistry.ConfigurationError(
                        file: reader.file, key: key, problem: "must be a SHA-256 public-key pin: sha256// and the base64 of 32 bytes (openssl … | openssl dgst -sha256 -binary | base64)")
                }
                connection.pinnedPublicKeys.append(CurlTransport.PublicKeyPin(sha256Base64: digest))
            }
        }
        return connection
    }

    /// PEM written in a config file as a file's path (relative to the config file) or a
    /// variable's text; PEM written into the file itself is refused (a key must never be, and
    /// a certificate reads better in a file of its own).
    static func pem(_ written: String, at key: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> HTTPRequest.ClientCertificate.Source {
        let isVariable = written.hasPrefix("${") && written.hasSuffix("}")
        if written.contains("-----BEGIN"), !isVariable {
            throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: "holds PEM text: name a file, or an environment variable that holds the PEM (\"${NAME}\"); a config file never holds a key in clear")
        }
        let text = try reader.substitute(written, at: key)
        if text.contains("-----BEGIN") { return .pem(Data(text.utf8)) }
        guard !text.isEmpty else { throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: "is empty") }
        return .file(path: reader.relativeToFile(text))
    }

    /// `"host[:port]"` and `"address[:port]"` (an IPv6 address in brackets).
    private static func hostOverride(from source: String, to target: String, at key: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> HTTPRequest.HostOverride {
        func split(_ text: String, _ role: String) throws(ServiceRegistry.ConfigurationError) -> (String, Int?) {
            var host = Substring(text)
            var port: Int?
            if host.hasPrefix("[") {
                guard let close = host.firstIndex(of: "]") else {
                    throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: "the \(role) \(text.debugDescription) opens an IPv6 address with [ and does not close it")
                }
                let rest = host[host.index(after: close)...]
                host = host[host.index(after: host.startIndex)..<close]
                if !rest.isEmpty {
                    guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else {
                        throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: "the \(role) \(text.debugDescription) has something other than :PORT after its address")
                    }
                    port = number
                }
            } else if let colon = host.lastIndex(of: ":") {
                guard let number = Int(host[host.index(after: colon)...]) else {
                    throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: "the \(role) \(text.debugDescription) has a port that is not a number")
                }
                port = number
                host = host[..<colon]
            }
            return (String(host), port)
        }
        let (host, port) = try split(source, "host")
        let (address, connectPort) = try split(target, "address")
        let override = HTTPRequest.HostOverride(host: host, port: port, connectingTo: address, atPort: connectPort)
        if let problem = override.problem { throw ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: problem) }
        return override
    }

    /// A `clientCertificate` section: each PEM from a file (relative to the config file) or from
    /// a variable's text; PEM written into the file itself is refused, as is a passphrase that
    /// is not a variable.
    private static func clientCertificate(_ section: ServiceFile.ClientCertificate, at path: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> HTTPRequest.ClientCertificate {
        func source(_ written: String, _ key: String) throws(ServiceRegistry.ConfigurationError) -> HTTPRequest.ClientCertificate.Source {
            try pem(written, at: key, reader: reader)
        }
        let certificate = try source(section.certificate, "\(path).certificate")
        let key = try section.key.map { text throws(ServiceRegistry.ConfigurationError) in try source(text, "\(path).key") }
        var passphrase: Secret?
        if let written = section.passphrase {
            guard written.hasPrefix("${"), written.hasSuffix("}") else {
                throw ServiceRegistry.ConfigurationError(file: reader.file, key: "\(path).passphrase", problem: "must name an environment variable (write \"${NAME}\"): a config file never holds a secret in clear")
            }
            passphrase = Secret(try reader.substitute(written, at: "\(path).passphrase"))
        }
        return HTTPRequest.ClientCertificate(certificate: certificate, privateKey: key, passphrase: passphrase)
    }
}

extension ConfigReader {
    /// A path as the file means it: an absolute one as it is, a relative one from the config
    /// file's folder.
    func relativeToFile(_ path: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: file).deletingLastPathComponent().appending(path: path).path
    }
}
