import CCurl
import Foundation

extension Transfer {
    /// The connection settings in force — the request's added to the transport's — or `nil`
    /// when neither has any (most requests: then nothing is set).
    func connectionSettings(_ options: PreparedOptions) -> HTTPRequest.Connection? {
        if let own = request.connection { return own.adding(to: options.configuration.connection) }
        return options.hasConnectionSettings ? options.configuration.connection : nil
    }

    /// Sets the socket, the host overrides and the client certificate: those in force, or
    /// libcurl's defaults again after a transfer that had some.
    ///
    /// - Returns: Whether the transfer goes over a Unix-domain socket (and so through no proxy).
    /// - Throws: ``TransportError`` naming what cannot be used (a socket path too long, an
    ///   override without a host).
    func applyConnection(to handle: EasyHandle, _ options: PreparedOptions, _ applied: inout EasyHandle.AppliedOptions) throws(TransportError) -> Bool {
        guard let connection = connectionSettings(options) else {
            if applied.connectionSet {
                handle.clearConnection()
                applied.connectionSet = false
            }
            if applied.trustSet {
                _ = handle.applyTrust(of: nil, options)
                applied.trustSet = false
            }
            self.connection = nil
            return false
        }
        if let problem = connection.problem {
            throw TransportError(.invalidRequest, url: urlString, detail: problem)
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for override in connection.hostOverrides {
            guard let appended = curl_slist_append(list, override.curlNotation) else {
                curl_slist_free_all(list)
                throw TransportError(.invalidRequest, url: urlString, detail: "out of memory building the host overrides")
            }
            list = appended
        }
        connectToList = list
        self.connection = connection
        applied.connectionSet = true
        let code = handle.applyConnection(connection, connectTo: list)
        guard code == CURLE_OK else {
            throw TransportError(
                .tlsFailure, url: urlString, detail: "libcurl refused the \(connection.clientCertificate.map(String.init(describing:)) ?? "connection settings"): \(String(cString: curl_easy_strerror(code)))",
                tlsReason: .clientCertificateUnusable, curlCode: Int(code.rawValue))
        }
        if connection.setsTrust || applied.trustSet {
            let code = handle.applyTrust(of: connection.setsTrust ? connection : nil, options)
            applied.trustSet = connection.setsTrust
            guard code == CURLE_OK else {
                throw TransportError(
                    .tlsFailure, url: urlString, detail: "libcurl refused the certificate authorities: \(String(cString: curl_easy_strerror(code)))",
                    tlsReason: .unreadableCertificateAuthorities, curlCode: Int(code.rawValue))
            }
        }
        return connection.unixSocketPath != nil
    }
}

extension EasyHandle {
    /// Sets every connection option from `connection` (an option it does not use is cleared).
    /// `connectTo` is its host overrides as a list the transfer owns until it ends.
    func applyConnection(_ connection: HTTPRequest.Connection, connectTo: UnsafeMutablePointer<curl_slist>?) -> CURLcode {
        if let path = connection.unixSocketPath {
            set(CURLOPT_UNIX_SOCKET_PATH, path)
        } else {
            set(CURLOPT_UNIX_SOCKET_PATH, pointer: nil)
        }
        _ = aif_curl_easy_setopt_slist(raw, CURLOPT_CONNECT_TO, connectTo)
        guard let identity = connection.clientCertificate else {
            clearClientCertificate()
            return CURLE_OK
        }
        var code = setPEM(identity.certificate, file: CURLOPT_SSLCERT, blob: CURLOPT_SSLCERT_BLOB)
        if code != CURLE_OK { return code }
        if let key = identity.privateKey {
            code = setPEM(key, file: CURLOPT_SSLKEY, blob: CURLOPT_SSLKEY_BLOB)
            if code != CURLE_OK { return code }
        } else {
            set(CURLOPT_SSLKEY, pointer: nil)
            set(CURLOPT_SSLKEY_BLOB, pointer: nil)
        }
        if let passphrase = identity.passphrase {
            // libcurl copies the C string; the copy here is wiped before it is freed.
            var text = passphrase.bytes.map { CChar(bitPattern: $0) } + [0]
            code = aif_curl_easy_setopt_string(raw, CURLOPT_KEYPASSWD, &text)
            text.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            if code != CURLE_OK { return code }
        } else {
            set(CURLOPT_KEYPASSWD, pointer: nil)
        }
        return CURLE_OK
    }

    /// Sets whom the server's certificate must satisfy: `connection`'s CA and pins where it
    /// sets them, else the transport's (`nil`: the transport's alone, after a transfer that
    /// had others).
    func applyTrust(of connection: HTTPRequest.Connection?, _ options: PreparedOptions) -> CURLcode {
        let tls = options.configuration.tls
        let pins = connection.flatMap { $0.pinnedPublicKeys.isEmpty ? nil : $0.pinnedPublicKeys.map(\.curlNotation).joined(separator: ";") } ?? options.pinnedKeys
        if let pins { set(CURLOPT_PINNEDPUBLICKEY, pins) } else { set(CURLOPT_PINNEDPUBLICKEY, pointer: nil) }
        return setCertificateAuthorities(connection?.certificateAuthorities ?? tls.certificateAuthorities)
    }

    /// Trusts `authorities`, or (`nil`) the store libcurl was built to use.
    func setCertificateAuthorities(_ authorities: CurlTransport.CertificateAuthorities?) -> CURLcode {
        switch authorities {
        case nil:
            set(CURLOPT_CAINFO_BLOB, pointer: nil)
            guard let bundle = Self.builtInCertificateAuthorities else { return set(CURLOPT_CAINFO, pointer: nil) }
            return set(CURLOPT_CAINFO, bundle)
        case .file(let path)?:
            set(CURLOPT_CAINFO_BLOB, pointer: nil)
            return set(CURLOPT_CAINFO, path)
        case .pem(let pem)?:
            var bytes = pem
            return bytes.withUnsafeMutableBytes { buffer in
                aif_curl_easy_setopt_blob(raw, CURLOPT_CAINFO_BLOB, buffer.baseAddress!, buffer.count)
            }
        }
    }

    /// The CA bundle libcurl uses when told none (Debian's `/etc/ssl/certs/ca-certificates.crt`),
    /// read once from a fresh handle, to go back to after a transfer that trusted another.
    private static let builtInCertificateAuthorities: String? = {
        guard let handle = curl_easy_init() else { return nil }
        defer { curl_easy_cleanup(handle) }
        var path: UnsafeMutablePointer<CChar>?
        guard aif_curl_easy_getinfo_string(handle, CURLINFO_CAINFO, &path) == CURLE_OK, let path else { return nil }
        return String(cString: path)
    }()

    /// Back to a TCP connection without overrides or a client certificate.
    func clearConnection() {
        set(CURLOPT_UNIX_SOCKET_PATH, pointer: nil)
        set(CURLOPT_CONNECT_TO, pointer: nil)
        clearClientCertificate()
    }

    private func clearClientCertificate() {
        set(CURLOPT_SSLCERT, pointer: nil)
        set(CURLOPT_SSLCERT_BLOB, pointer: nil)
        set(CURLOPT_SSLKEY, pointer: nil)
        set(CURLOPT_SSLKEY_BLOB, pointer: nil)
        set(CURLOPT_KEYPASSWD, pointer: nil)
    }

    /// A PEM source: a path for `file`, or bytes libcurl copies for `blob`.
    private func setPEM(_ source: HTTPRequest.ClientCertificate.Source, file: CURLoption, blob: CURLoption) -> CURLcode {
        switch source {
        case .file(let path):
            set(blob, pointer: nil)
            return set(file, path)
        case .pem(let data):
            set(file, pointer: nil)
            guard !data.isEmpty else { return CURLE_BAD_FUNCTION_ARGUMENT }
            var bytes = data
            return bytes.withUnsafeMutableBytes { buffer in
                aif_curl_easy_setopt_blob(raw, blob, buffer.baseAddress!, buffer.count)
            }
        }
    }
}
