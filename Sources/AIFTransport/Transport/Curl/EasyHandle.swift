import CCurl

/// Owns one libcurl easy handle and its error buffer. Used only on the event loop's thread;
/// kept in a pool and reused from transfer to transfer without `curl_easy_reset`, so that its
/// allocations and connection state stay: each transfer sets the options it needs (see
/// ``AppliedOptions``).
final class EasyHandle {
    /// The `CURL *`.
    let raw: UnsafeMutableRawPointer
    /// `CURLOPT_ERRORBUFFER`: libcurl writes a detailed message here when a transfer fails.
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// Creates a handle, or returns `nil` when libcurl cannot allocate one.
    init?() {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        attachErrorBuffer()
    }

    deinit {
        curl_easy_cleanup(raw)
        if let ownHeaders { curl_slist_free_all(ownHeaders.list) }
        errorBuffer.deallocate()
    }

    /// The header list of a request with headers of its own, and what it was made from.
    struct OwnHeaders {
        /// The request's header fields.
        let fields: [HTTPHeaders.Field]
        /// The kind of body it sent, which adds lines of its own.
        let body: Transfer.BodyKind
        /// The list libcurl reads while a transfer runs.
        let list: UnsafeMutablePointer<curl_slist>
    }

    /// The header list the handle's last transfer with headers of its own made: the next one
    /// whose fields and kind of body are the same sends it again rather than making another (a
    /// client's POSTs carry the same `Content-Type`, its calls the same token). Replaced by the
    /// next list made, and freed with the handle. Only the event loop's thread touches it.
    @exclusivity(unchecked) var ownHeaders: OwnHeaders?

    /// Keeps `list`, made from `fields`, as the handle's own, freeing the one it replaces (which
    /// no transfer reads: the handle runs one transfer at a time, and sets the new list before
    /// its next).
    func keep(_ list: UnsafeMutablePointer<curl_slist>, madeFrom fields: [HTTPHeaders.Field], body: Transfer.BodyKind) {
        if let old = ownHeaders { curl_slist_free_all(old.list) }
        ownHeaders = OwnHeaders(fields: fields, body: body, list: list)
    }

    /// How the request method was last configured.
    enum MethodOptions: Equatable {
        case get
        case head
        /// A method without a body other than GET and HEAD.
        case custom(String)
        /// A request with a body: POST, or another method sent the same way.
        case body(customMethod: String?)
        /// A `multipart/form-data` body (`CURLOPT_MIMEPOST`), POST or another method.
        case form(customMethod: String?)
    }

    /// The per-request options as the handle's last transfer left them, so the next one sets
    /// only what differs. `nil` and sentinel values mean "never set".
    struct AppliedOptions {
        var scheme: Transfer.Scheme?
        var method: MethodOptions?
        var progress: Bool?
        var headers: UnsafeMutablePointer<curl_slist>?
        var headersSet = false
        var connectTimeout = -1
        var idleSeconds = -1
        var maxBodySize: Int64 = -1
        /// Whether `CURLOPT_REQUEST_TARGET` is set (see `Transfer.requestTarget(of:)`).
        var requestTarget = false
        /// Whether the buffers are the large ones of a bulk transfer (see `Transfer.applyBuffers`).
        var bulkBuffers = false
        /// Whether connection settings (a socket, host overrides, a client certificate) are set.
        var connectionSet = false
        /// Whether a request's own trust (a CA, pins) is set instead of the transport's.
        var trustSet = false
        /// Whether libcurl holds a copy of the body (`CURLOPT_COPYPOSTFIELDS`).
        var heldBody = false
    }

    /// See ``AppliedOptions``. Only the event loop's thread touches it.
    @exclusivity(unchecked) var applied = AppliedOptions()

    /// The transfer the handle runs now. libcurl's callbacks reach it through the handle: every
    /// data pointer of the handle (`CURLOPT_PRIVATE`, `CURLOPT_WRITEDATA`, …) names the handle
    /// itself, set once when it is made, rather than seven options set again for each transfer.
    /// Unretained: the loop's table keeps a transfer alive while its handle runs it. Only the
    /// event loop's thread touches it.
    @exclusivity(unchecked) var transfer: Unmanaged<Transfer>?

    /// The transfer of the handle a callback's `userdata` (or `CURLINFO_PRIVATE`) names.
    @inline(__always)
    static func transfer(of userdata: UnsafeMutableRawPointer) -> Transfer? {
        Unmanaged<EasyHandle>.fromOpaque(userdata).takeUnretainedValue().transfer?.takeUnretainedValue()
    }

    private func attachErrorBuffer() {
        errorBuffer[0] = 0
        _ = aif_curl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    /// Forgets the previous transfer's error message.
    @inline(__always)
    func clearErrorMessage() {
        errorBuffer[0] = 0
    }

    /// libcurl's detailed message for the last failure, if it wrote one.
    var errorMessage: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    // MARK: Options

    @inline(__always)
    @discardableResult
    func set(_ option: CURLoption, _ value: Int) -> CURLcode {
        aif_curl_easy_setopt_long(raw, option, value)
    }

    @inline(__always)
    @discardableResult
    func set(_ option: CURLoption, _ value: Bool) -> CURLcode {
        aif_curl_easy_setopt_long(raw, option, value ? 1 : 0)
    }

    @inline(__always)
    @discardableResult
    func set(_ option: CURLoption, offset value: Int64) -> CURLcode {
        aif_curl_easy_setopt_offset(raw, option, curl_off_t(value))
    }

    /// Sets a string option; libcurl copies the string.
    @inline(__always)
    @discardableResult
    func set(_ option: CURLoption, _ value: String) -> CURLcode {
        value.withCString { aif_curl_easy_setopt_string(raw, option, $0) }
    }

    @inline(__always)
    @discardableResult
    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) -> CURLcode {
        aif_curl_easy_setopt_pointer(raw, option, value)
    }

    // MARK: Information

    @inline(__always)
    func info(long info: CURLINFO) -> Int {
        var value = 0
        _ = aif_curl_easy_getinfo_long(raw, info, &value)
        return value
    }

    @inline(__always)
    func info(offset info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = aif_curl_easy_getinfo_offset(raw, info, &value)
        return Int64(value)
    }

    /// A `CURLINFO_*_TIME_T` value (microseconds) as a duration.
    @inline(__always)
    func info(time info: CURLINFO) -> Duration {
        .microseconds(self.info(offset: info))
    }

    func info(string info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        _ = aif_curl_easy_getinfo_string(raw, info, &value)
        return value.map { String(cString: $0) }
    }

    func info(pointer info: CURLINFO) -> UnsafeMutableRawPointer? {
        var value: UnsafeMutableRawPointer?
        _ = aif_curl_easy_getinfo_pointer(raw, info, &value)
        return value
    }
}
