import CCurl
import Foundation

/// The parts of a ``CurlTransport/Configuration`` that become libcurl options, converted once
/// when the transport is created rather than per request.
struct PreparedOptions: Sendable {
    let configuration: CurlTransport.Configuration
    let verifyPeer: Bool
    let pinnedKeys: String?
    let excludedProxyHosts: String
    /// `CURLOPT_ACCEPT_ENCODING` ("" for every encoding libcurl can undo), or `nil` to leave
    /// bodies as they come.
    let acceptEncoding: String?
    /// The default headers as the lines libcurl takes, built once, with the `Accept-Encoding`
    /// line when decompression is on (see ``decodableEncodings``).
    let defaultHeaderLines: [(name: String, line: String)]
    /// The first default header that cannot be sent, if any: every request then fails with it.
    let invalidDefaultHeader: String?
    /// The default connect timeout in libcurl's milliseconds (0: no limit), converted once.
    let defaultConnectTimeoutMilliseconds: Int
    /// The default total timeout in nanoseconds, converted once (reading a `Duration`'s
    /// components divides 128-bit numbers, which each request would do again).
    let defaultTotalNanoseconds: UInt64?
    /// The default stall limit in whole seconds (0: none).
    let defaultIdleSeconds: Int
    /// The proxy for each scheme ("" for none), and whether that scheme's transfers wait to
    /// multiplex on a connection being set up.
    let httpProxy: String
    let httpsProxy: String
    let httpMultiplexes: Bool
    let httpsMultiplexes: Bool
    /// Whether the transport's ``CurlTransport/Configuration/connection`` sets anything.
    let hasConnectionSettings: Bool

    init(_ configuration: CurlTransport.Configuration) {
        self.configuration = configuration
        verifyPeer = configuration.tls.certificateVerification == .full
        pinnedKeys = configuration.tls.pinnedPublicKeys.isEmpty
            ? nil : configuration.tls.pinnedPublicKeys.map(\.curlNotation).joined(separator: ";")
        excludedProxyHosts = configuration.proxy.excludedHosts.joined(separator: ",")
        acceptEncoding = configuration.decompression == .automatic ? "" : nil
        var defaults = configuration.defaultHeaders.fields
        if configuration.decompression == .automatic, !Self.decodableEncodings.isEmpty,
            !defaults.contains(where: { HTTPHeaders.namesMatch($0.name, "Accept-Encoding") })
        {
            defaults.append(HTTPHeaders.Field(name: "Accept-Encoding", value: Self.decodableEncodings))
        }
        defaultHeaderLines = defaults.map { ($0.name, Transfer.curlHeaderLine($0)) }
        invalidDefaultHeader = defaults.first { !Transfer.isValidHeader($0) }?.name
        defaultConnectTimeoutMilliseconds = configuration.timeouts.connect?.roundedUpMilliseconds ?? 0
        defaultTotalNanoseconds = configuration.timeouts.total.map { UInt64($0.roundedUpNanoseconds) }
        defaultIdleSeconds = configuration.timeouts.idle?.roundedUpSeconds ?? 0
        httpProxy = configuration.proxy.proxy(forScheme: "http") ?? ""
        httpsProxy = configuration.proxy.proxy(forScheme: "https") ?? ""
        httpMultiplexes = configuration.httpVersion == .http2PriorKnowledge
        httpsMultiplexes = configuration.httpVersion != .http1Only
        hasConnectionSettings = !configuration.connection.isDefault
    }
}

extension PreparedOptions {
    /// The encodings libcurl can undo, named as libcurl names them in the `Accept-Encoding`
    /// it writes (`deflate, gzip, br, zstd`, as this libcurl was built), or "" for none.
    ///
    /// The transport sends that line itself, among the default headers: libcurl writes a line
    /// of its own afresh for every request, through its `printf` one byte at a time (a share of
    /// a request that callgrind shows: see `Benchmarks/history/notes.md`), and writes none when
    /// the request carries the header. `CURLOPT_ACCEPT_ENCODING` stays set, so that libcurl
    /// still decodes what comes back.
    static let decodableEncodings: String = {
        let features = aif_curl_version_info().pointee.features
        var names: [String] = []
        if features & CURL_VERSION_LIBZ != 0 { names += ["deflate", "gzip"] }
        if features & CURL_VERSION_BROTLI != 0 { names.append("br") }
        if features & CURL_VERSION_ZSTD != 0 { names.append("zstd") }
        return names.joined(separator: ", ")
    }()
}

/// Header lists shared by every transfer that adds no headers of its own, built once per
/// transport (most requests send only the defaults, and building a `curl_slist` costs a
/// `malloc` per line). Owned by the event loop, freed when it closes.
struct SharedHeaderLists {
    /// The default headers.
    let plain: UnsafeMutablePointer<curl_slist>?
    /// The default headers, plus the lines that stop libcurl from inventing a form content type
    /// and from waiting for `100 Continue` before a body.
    let withBody: UnsafeMutablePointer<curl_slist>?
    /// The default headers, plus the line that stops libcurl from inventing a form content
    /// type, for a body libcurl holds (which it never waits for `100 Continue` before).
    let withHeldBody: UnsafeMutablePointer<curl_slist>?
    /// The default headers, plus the line that stops libcurl from waiting for `100 Continue`
    /// before a multipart body (whose `Content-Type` libcurl writes).
    let withForm: UnsafeMutablePointer<curl_slist>?

    init(_ options: PreparedOptions) {
        var plain: UnsafeMutablePointer<curl_slist>?
        var withBody: UnsafeMutablePointer<curl_slist>?
        var withHeldBody: UnsafeMutablePointer<curl_slist>?
        var withForm: UnsafeMutablePointer<curl_slist>?
        for (_, line) in options.defaultHeaderLines {
            plain = curl_slist_append(plain, line) ?? plain
            withBody = curl_slist_append(withBody, line) ?? withBody
            withHeldBody = curl_slist_append(withHeldBody, line) ?? withHeldBody
            withForm = curl_slist_append(withForm, line) ?? withForm
        }
        for line in Transfer.bodyHeaderLines {
            withBody = curl_slist_append(withBody, line) ?? withBody
        }
        withHeldBody = curl_slist_append(withHeldBody, Transfer.bodyHeaderLines[0]) ?? withHeldBody
        withForm = curl_slist_append(withForm, Transfer.bodyHeaderLines[1]) ?? withForm
        self.plain = plain
        self.withBody = withBody
        self.withHeldBody = withHeldBody
        self.withForm = withForm
    }

    func free() {
        curl_slist_free_all(plain)
        curl_slist_free_all(withBody)
        curl_slist_free_all(withHeldBody)
        curl_slist_free_all(withForm)
    }
}

extension EasyHandle {
    /// Sets the options every transfer of a transport shares. Called once, when the handle is
    /// created: handles are reused without `curl_easy_reset`, so these stay set, and
    /// ``Transfer/configure(_:with:sharedHeaders:)`` sets every per-request option each time.
    func applyTransportOptions(_ options: PreparedOptions) -> CURLcode {
        let configuration = options.configuration
        set(CURLOPT_NOSIGNAL, true)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        // Every data pointer names the handle, which names its transfer of the moment.
        let context = Unmanaged.passUnretained(self).toOpaque()
        for option in [CURLOPT_PRIVATE, CURLOPT_WRITEDATA, CURLOPT_HEADERDATA, CURLOPT_READDATA, CURLOPT_SEEKDATA, CURLOPT_PREREQDATA, CURLOPT_XFERINFODATA] {
            set(option, pointer: context)
        }
        // Redirects are followed above libcurl, one transfer per hop (`RedirectingSend`):
        // libcurl 7.88 would resend PUT, PATCH and DELETE without their bodies after a 301/302,
        // and keep their method after a 303.
        set(CURLOPT_FOLLOWLOCATION, false)
        _ = aif_curl_easy_setopt_data_callback(raw, CURLOPT_WRITEFUNCTION, curlReceiveBody)
        _ = aif_curl_easy_setopt_data_callback(raw, CURLOPT_HEADERFUNCTION, curlReceiveHeader)
        _ = aif_curl_easy_setopt_data_callback(raw, CURLOPT_READFUNCTION, curlSendBody)
        _ = aif_curl_easy_setopt_seek_callback(raw, curlSeekBody)
        _ = aif_curl_easy_setopt_prereq_callback(raw, curlWillSendRequest)
        _ = aif_curl_easy_setopt_xferinfo_callback(raw, curlReportProgress)
        switch configuration.httpVersion {
        case .automatic: set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        case .http1Only: set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        case .http2PriorKnowledge: set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
        }
        set(CURLOPT_MAXAGE_CONN, max(1, Int(configuration.connectionPool.maxIdleTime.components.seconds)))
        if let acceptEncoding = options.acceptEncoding {
            set(CURLOPT_ACCEPT_ENCODING, acceptEncoding)
        }
        if !options.verifyPeer {
            set(CURLOPT_SSL_VERIFYPEER, false)
            set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        if let authorities = configuration.tls.certificateAuthorities {
            let code = setCertificateAuthorities(authorities)
            if code != CURLE_OK { return code }
        }
        if let pins = options.pinnedKeys {
            set(CURLOPT_PINNEDPUBLICKEY, pins)
        }
        // Set even when empty: the configuration's list is the whole list (`.environment()`
        // read `no_proxy` into it once). Left unset, libcurl reads `no_proxy` and `NO_PROXY`
        // for every request, and an explicit proxy (or `.none`'s) would be bypassed for the
        // hosts the environment names.
        set(CURLOPT_NOPROXY, options.excludedProxyHosts)
        return CURLE_OK
    }
}

extension Transfer {
    /// Sets every per-request option on a handle that already carries the transport's options
    /// (and whatever the previous transfer set: every option set here is set on every call).
    ///
    /// - Throws: ``TransportError`` when the request cannot be sent as given (a bad header, an
    ///   unreadable body file, a URL that is not `http`/`https`).
    func configure(
        _ handle: EasyHandle, with options: PreparedOptions, sharedHeaders: SharedHeaderLists, loop: CurlEventLoop
    ) throws(TransportError) {
        guard let scheme = self.scheme else {
            throw TransportError(.invalidURL, url: urlString, detail: "only http and https URLs are supported, not \(schemeText):")
        }
        handle.clearErrorMessage()
        // Every callback of the handle finds this transfer through it (see `EasyHandle.transfer`).
        handle.transfer = Unmanaged.passUnretained(self)
        // Every per-request option but the URL is compared with what the handle's previous
        // transfer left set (`handle.applied`) and set only when it differs: a pooled handle is
        // never reset, so each option either is set here or already holds this request's value.
        var applied = handle.applied
        defer { handle.applied = applied }
        try applyURL(to: handle, scheme: scheme, options, &applied)
        if applied.progress != (progress != nil) {
            handle.set(CURLOPT_NOPROGRESS, progress == nil)
            applied.progress = progress != nil
        }
        let body = try applyMethodAndBody(to: handle, loop: loop, &applied)
        try applyHeaders(to: handle, body: body, options, sharedHeaders: sharedHeaders, &applied)
        let overSocket = try applyConnection(to: handle, options, &applied)
        // What depends on the scheme: the proxy, and waiting to multiplex (HTTP/2). A transfer
        // over a Unix-domain socket goes through no proxy (and the next one sets the proxy again).
        if overSocket {
            handle.set(CURLOPT_PROXY, "")
            handle.set(CURLOPT_PIPEWAIT, scheme == .https ? options.httpsMultiplexes : options.httpMultiplexes)
            applied.scheme = nil
        } else if applied.scheme != scheme {
            handle.set(CURLOPT_PROXY, scheme == .https ? options.httpsProxy : options.httpProxy)
            handle.set(CURLOPT_PIPEWAIT, scheme == .https ? options.httpsMultiplexes : options.httpMultiplexes)
            applied.scheme = scheme
        }
        applyTimeouts(to: handle, options, &applied)
        applyResponseLimit(to: handle, options, &applied)
        applyBuffers(to: handle, body: body, &applied)
    }

    /// The URL: as the request target where that is exact (see ``requestTarget(of:)``), whole
    /// otherwise.
    private func applyURL(to handle: EasyHandle, scheme: Scheme, _ options: PreparedOptions, _ applied: inout EasyHandle.AppliedOptions) throws(TransportError) {
        let splits = scheme == .https || options.httpProxy.isEmpty
        let accepted = urlString.withCString { text -> Bool in
            let length = strlen(text)
            if splits, let target = text.withMemoryRebound(to: UInt8.self, capacity: length, { Self.requestTarget(of: UnsafeBufferPointer(start: $0, count: length)) }) {
                // The URL up to its query, as a C string of its own; the target is the rest of
                // the text from the path on, already NUL-terminated.
                let accepted = withUnsafeTemporaryAllocation(of: CChar.self, capacity: target.queryStart + 1) { prefix -> Bool in
                    prefix.baseAddress!.update(from: text, count: target.queryStart)
                    prefix[target.queryStart] = 0
                    return aif_curl_easy_setopt_string(handle.raw, CURLOPT_URL, prefix.baseAddress!) == CURLE_OK
                }
                aif_curl_easy_setopt_string(handle.raw, CURLOPT_REQUEST_TARGET, text + target.pathStart)
                applied.requestTarget = true
                return accepted
            }
            if applied.requestTarget {
                handle.set(CURLOPT_REQUEST_TARGET, pointer: nil)
                applied.requestTarget = false
            }
            return aif_curl_easy_setopt_string(handle.raw, CURLOPT_URL, text) == CURLE_OK
        }
        guard accepted else {
            throw TransportError(.invalidURL, url: urlString, detail: "libcurl rejected the URL")
        }
    }

    /// The method, and the body source with its size; returns what kind of body is sent.
    private func applyMethodAndBody(
        to handle: EasyHandle, loop: CurlEventLoop, _ applied: inout EasyHandle.AppliedOptions
    ) throws(TransportError) -> BodyKind {
        let body = try openBody(handle, loop: loop)
        // A body libcurl holds is set (or let go) before the method: libcurl takes either
        // setting as a POST, which the method options below then change when they must.
        if case .held(let data) = body {
            handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(data.count))
            let code = data.withUnsafeBytes { aif_curl_easy_setopt_pointer(handle.raw, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
            guard code == CURLE_OK else {
                throw TransportError(.other, url: urlString, detail: "libcurl could not take the request body: \(String(cString: curl_easy_strerror(code)))", curlCode: Int(code.rawValue))
            }
            applied.heldBody = true
        } else if applied.heldBody {
            handle.set(CURLOPT_POSTFIELDS, pointer: nil)
            applied.heldBody = false
        }
        let method = request.method
        let kind: BodyKind
        switch body {
        case .form: kind = .form
        case .stream: kind = .bytes
        case .held: kind = .heldBytes
        case .none: kind = method == .post || method == .put || method == .patch ? .bytes : .none
        }
        let methodOptions: EasyHandle.MethodOptions
        switch kind {
        case .form:
            methodOptions = .form(customMethod: method == .post ? nil : method.rawValue)
        case .bytes, .heldBytes:
            methodOptions = .body(customMethod: method == .post ? nil : method.rawValue)
        case .none:
            methodOptions = method == .get ? .get : method == .head ? .head : .custom(method.rawValue)
        }
        if applied.method != methodOptions {
            switch methodOptions {
            case .get, .head, .custom:
                handle.set(CURLOPT_HTTPGET, true)
                handle.set(CURLOPT_NOBODY, methodOptions == .head)
                if case .custom(let name) = methodOptions {
                    handle.set(CURLOPT_CUSTOMREQUEST, name)
                } else {
                    handle.set(CURLOPT_CUSTOMREQUEST, pointer: nil)
                }
            case .body(let customMethod), .form(let customMethod):
                handle.set(CURLOPT_NOBODY, false)
                // A form's method is set by CURLOPT_MIMEPOST below.
                if case .body = methodOptions { handle.set(CURLOPT_POST, true) }
                if let customMethod {
                    handle.set(CURLOPT_CUSTOMREQUEST, customMethod)
                } else {
                    handle.set(CURLOPT_CUSTOMREQUEST, pointer: nil)
                }
            }
            applied.method = methodOptions
        }
        switch body {
        case .form(let mime):
            // Each form is new: set every time. It unbinds from the handle when freed.
            let code = handle.set(CURLOPT_MIMEPOST, pointer: UnsafeMutableRawPointer(mime))
            guard code == CURLE_OK else {
                throw TransportError(.other, url: urlString, detail: "libcurl refused the multipart body: \(String(cString: curl_easy_strerror(code)))", curlCode: Int(code.rawValue))
            }
        case .stream(let size):
            handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: size)
        case .held:
            break
        case .none:
            if kind == .bytes { handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0) }
        }
        return kind
    }

    /// What kind of body a request sends, for its header lines.
    enum BodyKind {
        /// None.
        case none
        /// Bytes read through the read callback (possibly none, for a bodiless POST).
        case bytes
        /// Bytes libcurl holds and sends with the head: under 64 KiB, for which it never asks
        /// for `100 Continue`.
        case heldBytes
        /// A `multipart/form-data` body libcurl writes, with its own `Content-Type`.
        case form
    }

    /// The headers: the transport's defaults, then the request's (which win by name).
    private func applyHeaders(
        to handle: EasyHandle, body: BodyKind, _ options: PreparedOptions, sharedHeaders: SharedHeaderLists, _ applied: inout EasyHandle.AppliedOptions
    ) throws(TransportError) {
        if let invalid = options.invalidDefaultHeader {
            throw TransportError(.invalidRequest, url: urlString, detail: "default header \(invalid.debugDescription) has an invalid name or a line break in its value")
        }
        let list: UnsafeMutablePointer<curl_slist>?
        if request.headers.isEmpty {
            switch body {
            case .none: list = sharedHeaders.plain
            case .bytes: list = sharedHeaders.withBody
            case .heldBytes: list = sharedHeaders.withHeldBody
            case .form: list = sharedHeaders.withForm
            }
        } else {
            let fields = request.headers.fields
            if let kept = handle.ownHeaders, kept.body == body, kept.fields == fields {
                list = kept.list
            } else {
                let made = try makeHeaderList(options, fields: fields, body: body)
                handle.keep(made, madeFrom: fields, body: body)
                list = made
            }
        }
        if !applied.headersSet || applied.headers != list {
            _ = aif_curl_easy_setopt_slist(handle.raw, CURLOPT_HTTPHEADER, list)
            applied.headers = list
            applied.headersSet = true
        }
    }

    /// Sets the timeouts in force (the request's own, or the transport's) and the total
    /// deadline, which the event loop keeps (see ``TransferDeadlines``): libcurl gets no total
    /// timeout, so it cannot end a transfer at a time of its own reckoning.
    func setDeadline(_ options: PreparedOptions) {
        let total: UInt64?
        if let timeouts = request.timeouts {
            effectiveTimeouts = timeouts
            total = timeouts.total.map { UInt64($0.roundedUpNanoseconds) }
        } else {
            effectiveTimeouts = options.configuration.timeouts
            total = options.defaultTotalNanoseconds
        }
        deadline = total.map { createdAt &+ $0 } ?? .max
    }

    /// The connect and idle limits: the request's own, or the transport's.
    private func applyTimeouts(to handle: EasyHandle, _ options: PreparedOptions, _ applied: inout EasyHandle.AppliedOptions) {
        let connectMilliseconds: Int
        let idleSeconds: Int
        if let timeouts = request.timeouts {
            connectMilliseconds = timeouts.connect?.roundedUpMilliseconds ?? 0
            idleSeconds = timeouts.idle?.roundedUpSeconds ?? 0
        } else {
            connectMilliseconds = options.defaultConnectTimeoutMilliseconds
            idleSeconds = options.defaultIdleSeconds
        }
        if applied.connectTimeout != connectMilliseconds {
            handle.set(CURLOPT_CONNECTTIMEOUT_MS, connectMilliseconds)
            applied.connectTimeout = connectMilliseconds
        }
        if applied.idleSeconds != idleSeconds {
            // Under one byte a second for `idleSeconds` is a stall (0 turns the check off).
            handle.set(CURLOPT_LOW_SPEED_LIMIT, idleSeconds > 0 ? 1 : 0)
            handle.set(CURLOPT_LOW_SPEED_TIME, idleSeconds)
            applied.idleSeconds = idleSeconds
        }
    }

    /// Large buffers for bulk transfers — a body going to a receiver (a file, a stream), or a
    /// file, form or stream going out: 512 KiB to read into and 256 KiB to send from instead of
    /// libcurl's 16 KiB and 64 KiB, so that a big file moves in a sixteenth of the callbacks and
    /// system calls (the CLI itself reads 100 KiB at a time; what the small buffers cost a
    /// download is in `Benchmarks/history/notes.md`). Ordinary requests keep the
    /// small ones, which the transport recycles; so do transfers with a ``TransferControl``,
    /// whose pacing and pausing work a buffer at a time, and streams (which have one of their
    /// own): libcurl allocates the buffer for each transfer, and 512 KiB cost a streamed small
    /// answer more than the big reads saved a streamed download (see `Benchmarks/README.md`).
    private func applyBuffers(to handle: EasyHandle, body: BodyKind, _ applied: inout EasyHandle.AppliedOptions) {
        var bulk = request.control == nil && (request.bodyReceiver != nil || body == .form)
        if !bulk, body == .bytes, request.control == nil {
            switch request.body {
            case .file, .stream: bulk = true
            default: break
            }
        }
        guard applied.bulkBuffers != bulk else { return }
        // Back to libcurl's defaults after a bulk transfer (0 means the default for the first).
        handle.set(CURLOPT_BUFFERSIZE, bulk ? 512 << 10 : 0)
        handle.set(CURLOPT_UPLOAD_BUFFERSIZE, bulk ? 256 << 10 : 64 << 10)
        applied.bulkBuffers = bulk
    }

    /// The response size limit: libcurl refuses a body that announces more, and
    /// ``receiveBody(_:)`` stops one that grows past it. A request with a body receiver has
    /// no announced limit: the receiver takes bodies of any size, and only those it leaves in
    /// memory are held to the limit, as they grow.
    private func applyResponseLimit(to handle: EasyHandle, _ options: PreparedOptions, _ applied: inout EasyHandle.AppliedOptions) {
        maxBodySize = request.maxResponseBodySize ?? options.configuration.limits.maxResponseBodySize ?? Int.max
        let announced = maxBodySize == Int.max || request.bodyReceiver != nil ? 0 : Int64(maxBodySize)
        if applied.maxBodySize != announced {
            handle.set(CURLOPT_MAXFILESIZE_LARGE, offset: announced)
            applied.maxBodySize = announced
        }
    }

    /// Where a URL's query starts and its path starts, when the request line can be handed to
    /// libcurl ready-made (`CURLOPT_REQUEST_TARGET`) while `CURLOPT_URL` gets the URL without
    /// its query.
    ///
    /// libcurl copies a URL through its `printf` one character at a time several times per
    /// transfer (parsing it, rebuilding it, writing the request line); a signed URL's long
    /// query (key, time, nonce, 64-character signature) made that much of libcurl's work per
    /// request. A query handed over as the request target
    /// is copied once, and the rest of the URL stays the same from one request to the next.
    ///
    /// Only done where the result is byte-for-byte the request line libcurl would have written
    /// itself (libcurl never follows a redirect here, which would reuse the target): the caller
    /// checks that no plain-HTTP proxy wants an absolute URL; here, the URL must
    /// have a query, no fragment, no dot segments in its path (libcurl would remove them), and
    /// nothing but printable ASCII (libcurl would reject it).
    static func requestTarget(of url: UnsafeBufferPointer<UInt8>) -> (pathStart: Int, queryStart: Int)? {
        // Without a query there is nothing to hand over: libcurl takes the URL whole, and the
        // URL is not read byte by byte here.
        guard let base = url.baseAddress, memchr(base, Int32(UInt8(ascii: "?")), url.count) != nil else { return nil }
        // Past "scheme://".
        var index = 0
        while index < url.count, url[index] != UInt8(ascii: ":") { index += 1 }
        guard index + 2 < url.count, url[index + 1] == UInt8(ascii: "/"), url[index + 2] == UInt8(ascii: "/") else { return nil }
        index += 3
        var pathStart = -1
        var queryStart = -1
        var previous: UInt8 = 0
        while index < url.count, queryStart < 0 {
            let byte = url[index]
            guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "#") else { return nil }
            if byte == UInt8(ascii: "?") {
                // "http://host?query": libcurl would add the "/" itself.
                guard pathStart >= 0 else { return nil }
                queryStart = index
            } else if pathStart < 0 {
                if byte == UInt8(ascii: "/") { pathStart = index }
            } else if byte == UInt8(ascii: "."), previous == UInt8(ascii: "/") {
                return nil
            }
            previous = byte
            index += 1
        }
        guard pathStart >= 0, queryStart >= 0 else { return nil }
        // The query (most of a signed URL) only has to be printable and fragment-free: eight
        // bytes at a time, then byte by byte from the first word that needs a closer look.
        while index + 8 <= url.count {
            let word = ByteWord.load(base, at: index)
            if ByteWord.containsByte(word, below: 0x21) || ByteWord.containsNonASCII(word) || ByteWord.contains(word, 0x7F)
                || ByteWord.contains(word, UInt8(ascii: "#"))
            {
                break
            }
            index += 8
        }
        while index < url.count {
            let byte = url[index]
            guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "#") else { return nil }
            index += 1
        }
        return (pathStart, queryStart)
    }

    /// Makes the header list of a request with headers of its own: defaults not overridden,
    /// then its headers, then what its kind of body needs.
    private func makeHeaderList(_ options: PreparedOptions, fields requestHeaders: [HTTPHeaders.Field], body: BodyKind) throws(TransportError)
        -> UnsafeMutablePointer<curl_slist>
    {
        var list: UnsafeMutablePointer<curl_slist>?
        func append(_ line: String) throws(TransportError) {
            guard let appended = curl_slist_append(list, line) else {
                throw TransportError(.invalidRequest, url: urlString, detail: "out of memory building headers")
            }
            list = appended
        }
        do {
            try appendHeaderLines(options, fields: requestHeaders, body: body, append)
        } catch {
            if let list { curl_slist_free_all(list) }
            throw error
        }
        // Never empty: the request has a field, valid since nothing was thrown.
        guard let list else { throw TransportError(.invalidRequest, url: urlString, detail: "out of memory building headers") }
        return list
    }

    private func appendHeaderLines(
        _ options: PreparedOptions, fields requestHeaders: [HTTPHeaders.Field], body: BodyKind, _ append: (String) throws(TransportError) -> Void
    ) throws(TransportError) {
        var sawContentType = false
        var sawExpect = false
        for (name, line) in options.defaultHeaderLines
        where !requestHeaders.contains(where: { HTTPHeaders.namesMatch($0.name, name) }) {
            try append(line)
        }
        for field in requestHeaders {
            guard Self.isValidHeader(field) else {
                throw TransportError(.invalidRequest, url: urlString, detail: "header \(field.name.debugDescription) has an invalid name or a line break in its value")
            }
            if HTTPHeaders.namesMatch(field.name, "Content-Type") {
                sawContentType = true
                // libcurl adds its boundary to a multipart type; it would send any other type
                // with a body whose boundary nobody announced.
                if body == .form, !field.value.lowercased().hasPrefix("multipart/") {
                    throw TransportError(
                        .invalidRequest, url: urlString, detail: "a multipart body needs a multipart/ Content-Type (libcurl adds the boundary), not \(field.value.debugDescription)")
                }
            }
            if HTTPHeaders.namesMatch(field.name, "Expect") { sawExpect = true }
            try append(Self.curlHeaderLine(field))
        }
        switch body {
        case .none: break
        case .bytes:
            if !sawContentType { try append(Self.bodyHeaderLines[0]) }
            if !sawExpect { try append(Self.bodyHeaderLines[1]) }
        case .heldBytes:
            if !sawContentType { try append(Self.bodyHeaderLines[0]) }
        case .form:
            // libcurl writes the form's `Content-Type` itself, unless one is given.
            if !sawExpect { try append(Self.bodyHeaderLines[1]) }
        }
    }

    /// Added to requests with a body (unless they set these headers): libcurl would otherwise
    /// invent a form content type, and wait a second for a `100 Continue` that many servers
    /// never send before large bodies.
    static let bodyHeaderLines = ["Content-Type:", "Expect:"]

    /// The header as libcurl takes it: `Name;` sends a header with an empty value (`Name:` would
    /// remove it).
    static func curlHeaderLine(_ field: HTTPHeaders.Field) -> String {
        field.value.isEmpty ? field.name + ";" : field.name + ": " + field.value
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
