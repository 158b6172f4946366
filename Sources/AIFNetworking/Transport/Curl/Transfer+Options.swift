import CCurl
import Foundation

/// The parts of a ``CurlTransport/Configuration`` that become libcurl options, converted once
/// when the transport is created rather than per request.
struct PreparedOptions: Sendable {
    let configuration: CurlTransport.Configuration
    let verifyPeer: Bool
    let pinnedKeys: String?
    let excludedProxyHosts: String
    let acceptEncoding: String?

    init(_ configuration: CurlTransport.Configuration) {
        self.configuration = configuration
        verifyPeer = configuration.tls.certificateVerification == .full
        pinnedKeys = configuration.tls.pinnedPublicKeys.isEmpty
            ? nil : configuration.tls.pinnedPublicKeys.map(\.curlNotation).joined(separator: ";")
        excludedProxyHosts = configuration.proxy.excludedHosts.joined(separator: ",")
        acceptEncoding = configuration.decompression == .automatic ? "" : nil
    }
}

extension Transfer {
    /// Sets every option the transfer needs on a freshly reset handle.
    ///
    /// - Throws: ``TransportError`` when the request cannot be sent as given (a bad header, an
    ///   unreadable body file, a URL that is not `http`/`https`).
    func configure(_ handle: EasyHandle, with options: PreparedOptions) throws(TransportError) {
        let configuration = options.configuration
        let url = request.url
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw TransportError(.invalidURL, url: urlString, detail: "only http and https URLs are supported, not \(url.scheme ?? "a URL without a scheme")")
        }
        let context = Unmanaged.passUnretained(self).toOpaque()

        handle.set(CURLOPT_PRIVATE, pointer: context)
        handle.set(CURLOPT_NOSIGNAL, true)
        guard handle.set(CURLOPT_URL, urlString) == CURLE_OK else {
            throw TransportError(.invalidURL, url: urlString, detail: "libcurl rejected the URL")
        }
        handle.set(CURLOPT_PROTOCOLS_STR, "http,https")
        handle.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")

        _ = aif_curl_easy_setopt_data_callback(handle.raw, CURLOPT_WRITEFUNCTION, curlReceiveBody)
        handle.set(CURLOPT_WRITEDATA, pointer: context)
        _ = aif_curl_easy_setopt_data_callback(handle.raw, CURLOPT_HEADERFUNCTION, curlReceiveHeader)
        handle.set(CURLOPT_HEADERDATA, pointer: context)

        // Method and body.
        let bodySize = try openBody()
        let method = request.method
        let hasBody = bodySize != nil || method == .post || method == .put || method == .patch
        if method == .head {
            handle.set(CURLOPT_NOBODY, true)
        } else if hasBody {
            handle.set(CURLOPT_POST, true)
            handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: bodySize ?? 0)
            _ = aif_curl_easy_setopt_data_callback(handle.raw, CURLOPT_READFUNCTION, curlSendBody)
            handle.set(CURLOPT_READDATA, pointer: context)
            _ = aif_curl_easy_setopt_seek_callback(handle.raw, curlSeekBody)
            handle.set(CURLOPT_SEEKDATA, pointer: context)
            if method != .post {
                handle.set(CURLOPT_CUSTOMREQUEST, method.rawValue)
            }
        } else if method != .get {
            handle.set(CURLOPT_CUSTOMREQUEST, method.rawValue)
        }

        // Headers: the transport's defaults, then the request's (which win by name).
        var list: UnsafeMutablePointer<curl_slist>?
        func append(_ field: HTTPHeaders.Field) throws(TransportError) {
            guard Self.isValidHeader(field) else {
                throw TransportError(.invalidRequest, url: urlString, detail: "header \(field.name.debugDescription) has an invalid name or a line break in its value")
            }
            // libcurl sends `Name;` as a header with an empty value (`Name:` would remove it).
            let line = field.value.isEmpty ? field.name + ";" : field.name + ": " + field.value
            guard let appended = curl_slist_append(list, line) else {
                throw TransportError(.invalidRequest, url: urlString, detail: "out of memory building headers")
            }
            list = appended
        }
        defer { headerList = list }
        var sawContentType = false
        var sawExpect = false
        let requestHeaders = request.headers.fields
        for field in configuration.defaultHeaders.fields
        where !requestHeaders.contains(where: { HTTPHeaders.namesMatch($0.name, field.name) }) {
            try append(field)
        }
        for field in requestHeaders {
            if HTTPHeaders.namesMatch(field.name, "Content-Type") { sawContentType = true }
            if HTTPHeaders.namesMatch(field.name, "Expect") { sawExpect = true }
            try append(field)
        }
        if hasBody {
            // libcurl would otherwise invent a form content type, and wait a second for a
            // `100 Continue` that many servers never send before large bodies.
            if !sawContentType, let appended = curl_slist_append(list, "Content-Type:") { list = appended }
            if !sawExpect, let appended = curl_slist_append(list, "Expect:") { list = appended }
        }
        if let list {
            _ = aif_curl_easy_setopt_slist(handle.raw, CURLOPT_HTTPHEADER, list)
        }

        // Protocol version and connection reuse.
        switch configuration.httpVersion {
        case .automatic:
            handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            if scheme == "https" {
                // Wait for a connection that may multiplex rather than open another one.
                handle.set(CURLOPT_PIPEWAIT, true)
            }
        case .http1Only:
            handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        case .http2PriorKnowledge:
            handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
            handle.set(CURLOPT_PIPEWAIT, true)
        }
        handle.set(CURLOPT_MAXAGE_CONN, max(1, Int(configuration.connectionPool.maxIdleTime.components.seconds)))

        // Timeouts.
        let timeouts = request.timeouts ?? configuration.timeouts
        effectiveTimeouts = timeouts
        if let connect = timeouts.connect {
            handle.set(CURLOPT_CONNECTTIMEOUT_MS, connect.roundedUpMilliseconds)
        }
        if let total = timeouts.total {
            handle.set(CURLOPT_TIMEOUT_MS, total.roundedUpMilliseconds)
        }

        // Redirects.
        switch request.redirects ?? configuration.redirects {
        case .never:
            handle.set(CURLOPT_FOLLOWLOCATION, false)
        case .follow(let max):
            handle.set(CURLOPT_FOLLOWLOCATION, true)
            handle.set(CURLOPT_MAXREDIRS, Swift.max(0, max))
        }

        if let acceptEncoding = options.acceptEncoding {
            handle.set(CURLOPT_ACCEPT_ENCODING, acceptEncoding)
        }

        // TLS.
        if !options.verifyPeer {
            handle.set(CURLOPT_SSL_VERIFYPEER, false)
            handle.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        switch configuration.tls.certificateAuthorities {
        case .none:
            break
        case .file(let path):
            handle.set(CURLOPT_CAINFO, path)
        case .pem(let pem):
            var bytes = pem
            let code = bytes.withUnsafeMutableBytes { buffer in
                aif_curl_easy_setopt_blob(handle.raw, CURLOPT_CAINFO_BLOB, buffer.baseAddress!, buffer.count)
            }
            guard code == CURLE_OK else {
                throw TransportError(.tlsFailure, url: urlString, detail: "libcurl rejected the in-memory CA bundle", tlsReason: .unreadableCertificateAuthorities)
            }
        }
        if let pins = options.pinnedKeys {
            handle.set(CURLOPT_PINNEDPUBLICKEY, pins)
        }

        // Proxy: always explicit, so that libcurl never reads the environment on its own.
        handle.set(CURLOPT_PROXY, configuration.proxy.proxy(forScheme: scheme) ?? "")
        if !options.excludedProxyHosts.isEmpty {
            handle.set(CURLOPT_NOPROXY, options.excludedProxyHosts)
        }

        if progress != nil {
            handle.set(CURLOPT_NOPROGRESS, false)
            _ = aif_curl_easy_setopt_xferinfo_callback(handle.raw, curlReportProgress)
            handle.set(CURLOPT_XFERINFODATA, pointer: context)
        }
    }

    /// A header name must be a non-empty token; neither part may hold a line break or NUL.
    static func isValidHeader(_ field: HTTPHeaders.Field) -> Bool {
        guard !field.name.isEmpty else { return false }
        for byte in field.name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
                UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
                UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                continue
            default:
                return false
            }
        }
        return !field.value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}
