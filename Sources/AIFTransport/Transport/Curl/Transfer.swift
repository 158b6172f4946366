import CCurl
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One request on its way through libcurl: the request, its completion, the response bytes
/// collected so far, and its lifecycle state.
///
/// - Note: `@unchecked Sendable` is safe because every mutable property is read and written
///   only on the event loop's thread (by the loop itself and by libcurl's callbacks, which run
///   inside `curl_multi_socket_action` on that thread). Other threads only hold the reference, to
///   hand it back to the loop in a command (submission, cancellation). For the same reason the
///   hot properties are `@exclusivity(unchecked)`: one thread, and no access to them overlaps
///   another, so the runtime's dynamic exclusivity bookkeeping, a cost on every request, buys
///   nothing. The one exception is ``laterHops()``, an atomic reference any
///   thread may set.
final class Transfer: @unchecked Sendable {
    typealias Completion = @Sendable (Result<HTTPResponse, TransportError>) -> Void

    let request: HTTPRequest
    /// Called once with the outcome. Set before the transfer is submitted (by the async face,
    /// just before; the submitting thread's write is ordered before the loop's read by the
    /// inbox lock) and cleared when called.
    var completion: Completion?
    let progress: (@Sendable (TransferProgress) -> Void)?
    /// Whether the completion hands the outcome to another thread — it resumes a task that does
    /// not run on the loop thread, or runs work on a ``StepExecutor`` — so that it is
    /// better called in a batch with others (see `CurlEventLoop.completeFinishedTransfers`).
    /// Set before submission, like ``completion``.
    var completesInBatches = false

    @exclusivity(unchecked) var state = TransferStateMachine()
    /// The easy handle while the transfer is configured or running.
    @exclusivity(unchecked) var handle: EasyHandle?
    /// The `curl_slist` of host overrides (`CURLOPT_CONNECT_TO`), when the transfer has its own.
    @exclusivity(unchecked) var connectToList: UnsafeMutablePointer<curl_slist>?
    /// The connection settings in force (see `applyConnection`), to name the socket or the
    /// client certificate when the connection fails.
    @exclusivity(unchecked) var connection: HTTPRequest.Connection?
    /// The connect timeout in force, to tell a connect timeout from a total one.
    @exclusivity(unchecked) var effectiveTimeouts = HTTPRequest.Timeouts.default
    /// Where the loop keeps the transfer in its table of running transfers.
    @exclusivity(unchecked) var runningIndex = -1
    /// When the transfer was made (``TransferSteering/now()`` nanoseconds): its total timeout
    /// counts from here, the moment the caller asked for it.
    let createdAt = TransferSteering.now()
    /// When the total timeout runs out, in ``TransferSteering/now()`` nanoseconds (set with
    /// the options; `UInt64.max` without one).
    @exclusivity(unchecked) var deadline = UInt64.max
    /// Where the loop keeps the transfer in its ``TransferDeadlines`` (-1: not there).
    @exclusivity(unchecked) var deadlineIndex = -1
    /// The origin whose slot the transfer holds in the loop's ``HostSlots`` (`nil`: none).
    @exclusivity(unchecked) var slotOrigin: Int?
    /// Which of its origin's lanes that slot is in (see ``HostSlots``).
    @exclusivity(unchecked) var slotLane = 0
    /// Whether the slots knew its origin to multiplex when it took its slot, or it has told the
    /// loop that it answers over HTTP/2.
    @exclusivity(unchecked) var slotKnowsMultiplexing = false
    /// The multi handle the transfer runs in, while it does.
    @exclusivity(unchecked) var multiHandle: MultiHandle?

    /// The raw header lines of the latest response (reset at each status line, so after
    /// redirects and `100 Continue` only the final response's headers remain).
    @exclusivity(unchecked) var headerBlock = ResponseBytes()
    @exclusivity(unchecked) var body = ResponseBytes()
    @exclusivity(unchecked) private var reservedBody = false
    /// The largest body this transfer keeps (set when it is configured).
    @exclusivity(unchecked) var maxBodySize = Int.max
    /// Set when the body grew past ``maxBodySize`` and the transfer was stopped for it.
    @exclusivity(unchecked) var exceededBodyLimit = false

    /// The request's body receiver while it takes the current response's body.
    @exclusivity(unchecked) private var receiving: (any HTTPRequest.BodyReceiver)?
    /// The same receiver when it gathers bursts, to be told when each ends.
    @exclusivity(unchecked) private var gathering: (any GatheringBodyReceiver)?
    /// Whether bytes reached ``gathering`` since the loop last ended its burst.
    @exclusivity(unchecked) private var inBurst = false
    /// Set when the body receiver refused the body, to report why.
    var receiverFailure: String?

    /// The bytes of a streamed body handed to libcurl: its progress counts chunked framing too.
    @exclusivity(unchecked) var streamedBodyBytes: Int64 = 0

    /// Whether the request's body is produced as it is sent (it needs steering to wait for it);
    /// set when the body is opened.
    @exclusivity(unchecked) var streamsBody = false

    /// How many times libcurl began to send the request: once, or more when a connection it
    /// reused closed before answering and it sent the request again on a fresh one.
    @exclusivity(unchecked) private(set) var sends = 0
    /// Whether any byte of an answer came since the request was last sent.
    @exclusivity(unchecked) private var answerStarted = false
    /// Set when libcurl was stopped from sending a request that is not safe to repeat a second
    /// time: its answer was lost, and the server may have processed it.
    @exclusivity(unchecked) private(set) var refusedToResend = false

    /// How many times the request was sent again after its first send.
    var resends: Int { max(0, sends - 1) }

    /// Whether the request went out and nothing of an answer came back since.
    var isAwaitingAnswer: Bool { sends > 0 && !answerStarted }

    /// The pausing and pacing of a request with a ``TransferControl``, while it runs.
    @exclusivity(unchecked) var steering: TransferSteering?

    @exclusivity(unchecked) private var upload: UploadSource?
    /// Set when reading the request body failed, to report it instead of libcurl's generic code.
    var uploadFailure: String?

    /// Where the transfers of later hops attach when this one is answered with a redirect.
    private let laterHopsCancellation = AtomicLazyReference<AsyncCancellation>()

    /// The request URL as text, for libcurl and for errors (computed once: Foundation's URL
    /// rebuilds it on every call).
    let urlString: String

    /// The loop the transfer is submitted to, which ``cancel()`` asks; `nil` where no handle is
    /// handed out (the async face cancels through its loop itself; tests make transfers never
    /// submitted). A handle kept after its transport shut down keeps the loop object, not its
    /// thread or connections, which the shutdown ended.
    let loop: CurlEventLoop?

    init(request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?, completion: Completion?, loop: CurlEventLoop? = nil) {
        // The text first: the request is then moved into place rather than copied.
        urlString = request.location.text
        self.request = request
        self.progress = progress
        self.completion = completion
        self.loop = loop
    }

    deinit {
        headerBlock.release()
        body.release()
    }

    /// Calls the completion with the outcome and lets go of it (and what it captured).
    func deliver(_ outcome: Result<HTTPResponse, TransportError>) {
        let completion = self.completion
        self.completion = nil
        completion?(outcome)
    }

    /// Ends a transfer the loop refused (it was shut down) at once, on the caller's thread.
    func refuse(because reason: String) {
        deliver(.failure(TransportError(.transportShutDown, url: urlString, detail: reason)))
    }

    /// The cancellation the hops after a redirect attach to, so that cancelling this transfer
    /// reaches them: made by whichever comes first, the redirect loop or a cancellation —
    /// which then leaves it cancelled, so a hop attached later is cancelled at once. Safe
    /// from any thread; nothing is allocated for a transfer that is neither redirected nor
    /// cancelled.
    func laterHops() -> AsyncCancellation {
        laterHopsCancellation.storeIfNil(AsyncCancellation())
    }

    /// The schemes the transport speaks.
    enum Scheme {
        case http
        case https
    }

    /// The URL's scheme, if it is `http` or `https` (in any case).
    var scheme: Scheme? {
        var url = urlString
        // Over the bytes, not the UTF-8 view's iterator: five times fewer instructions.
        return url.withUTF8 { bytes -> Scheme? in
            func lowered(_ index: Int) -> UInt8 { bytes[index] | 0x20 }
            guard bytes.count > 4, lowered(0) == UInt8(ascii: "h"), lowered(1) == UInt8(ascii: "t"), lowered(2) == UInt8(ascii: "t"),
                lowered(3) == UInt8(ascii: "p")
            else { return nil }
            if bytes[4] == UInt8(ascii: ":") { return .http }
            return bytes.count > 5 && lowered(4) == UInt8(ascii: "s") && bytes[5] == UInt8(ascii: ":") ? .https : nil
        }
    }

    /// The scheme as written before the colon, for error messages.
    var schemeText: String {
        urlString.split(separator: ":", maxSplits: 1).first.map(String.init) ?? urlString
    }

    // MARK: - Request body

    enum UploadSource {
        case bytes(Data, offset: Int)
        case file(descriptor: Int32, path: String)
        /// A `curl_mime` libcurl reads itself (``HTTPRequest/Body/multipart(_:)``).
        case form(OpaquePointer)
        /// Chunks a task produces (``HTTPRequest/Body/stream(_:)``).
        case stream(UploadPipe)
    }

    /// What the request sends, as the handle is configured for it.
    enum BodySetup {
        /// Nothing.
        case none
        /// Bytes of this size through ``readBody(into:capacity:)``.
        case stream(size: Int64)
        /// Bytes libcurl copies and sends with the request's head (`CURLOPT_COPYPOSTFIELDS`).
        case held(Data)
        /// A `curl_mime` for `CURLOPT_MIMEPOST`.
        case form(OpaquePointer)
    }

    /// The largest body sent with the request's head: libcurl writes a body it holds together
    /// with the head when it is smaller than 64 KiB.
    static let heldBodyLimit = (64 << 10) - 1

    /// Prepares the body source; a streamed body's producer wakes `loop` when it has bytes again.
    func openBody(_ handle: EasyHandle, loop: CurlEventLoop) throws(TransportError) -> BodySetup {
        switch request.body {
        case .empty:
            return .none
        case .bytes(let data):
            // A small body goes with the head, in the same write, as libcurl sends a body it
            // holds itself: no read callback, no upload buffer. One whose sending a control
            // paces or suspends is read a piece at a time, as the control lets it (a stream's
            // own control holds only its receiving).
            if !data.isEmpty, data.count <= Self.heldBodyLimit, request.control?.holdsOnlyForAReader ?? true { return .held(data) }
            upload = .bytes(data, offset: 0)
            return .stream(size: Int64(data.count))
        case .file(let path):
            let (descriptor, size) = try openBodyFile(path, for: "request body file")
            upload = .file(descriptor: descriptor, path: path)
            return .stream(size: size)
        case .multipart(let form):
            let mime = try makeMIME(form, handle)
            upload = .form(mime)
            return .form(mime)
        case .stream(let stream):
            guard stream.pipe.start(wake: { [weak loop, self] in loop?.steer(self) }) else {
                throw TransportError(
                    .bodySourceFailed, url: urlString,
                    detail: "the streamed request body was sent already: a stream is sent once, so it cannot follow a 307/308 redirect or be retried")
            }
            upload = .stream(stream.pipe)
            streamsBody = true
            return .stream(size: stream.length ?? -1)
        }
    }

    /// Opens a file to send: its descriptor and size. `what` names it in errors.
    func openBodyFile(_ path: String, for what: String) throws(TransportError) -> (descriptor: Int32, size: Int64) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw TransportError(.bodySourceFailed, url: urlString, detail: "cannot open \(what) \(path): \(reason)")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw TransportError(.bodySourceFailed, url: urlString, detail: "\(what) \(path) is not a regular file")
        }
        return (descriptor, Int64(status.st_size))
    }

    /// Copies up to `capacity` body bytes into `buffer`; returns the count, 0 at the end, or
    /// libcurl's abort value when the source failed.
    func readBody(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        guard let steering else { return readBodyBytes(into: buffer, capacity: capacity) }
        let allowance = steering.wantedMask & aif_curlpause_send != 0 ? 0 : steering.sendAllowance()
        guard allowance > 0 else {
            steering.pausedByCallback(aif_curlpause_send)
            return aif_curl_readfunc_pause
        }
        let count = readBodyBytes(into: buffer, capacity: min(capacity, allowance))
        if count == aif_curl_readfunc_pause {
            steering.waitForBody()
        } else if count > 0 && count != aif_curl_readfunc_abort {
            steering.sent(count)
        }
        return count
    }

    private func readBodyBytes(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        switch upload {
        case .none:
            return 0
        case .bytes(let data, let offset):
            let count = min(capacity, data.count - offset)
            guard count > 0 else { return 0 }
            let start = data.startIndex + offset
            buffer.withMemoryRebound(to: UInt8.self, capacity: count) { target in
                data.copyBytes(to: target, from: start..<(start + count))
            }
            upload = .bytes(data, offset: offset + count)
            return count
        case .form:
            return 0
        case .stream(let pipe):
            switch pipe.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity)) {
            case .bytes(let count):
                streamedBodyBytes += Int64(count)
                return count
            case .end: return 0
            case .wait: return aif_curl_readfunc_pause
            case .failed(let reason):
                uploadFailure = reason
                return aif_curl_readfunc_abort
            }
        case .file(let descriptor, let path):
            let count = read(descriptor, buffer, capacity)
            if count < 0 {
                uploadFailure = "reading request body file \(path) failed: \(String(cString: strerror(errno)))"
                return aif_curl_readfunc_abort
            }
            return count
        }
    }

    /// Moves the body source back to `offset` (libcurl rewinds it to send the request again on a
    /// fresh connection).
    func seekBody(to offset: Int64) -> Int32 {
        switch upload {
        case .none, .form:
            return offset == 0 ? aif_curl_seekfunc_ok : aif_curl_seekfunc_fail
        case .stream:
            // libcurl rewinds the body to send the request again on a fresh connection (see
            // ``willSendRequest()``), before it asks whether it may: a stream is sent once.
            if isAwaitingAnswer { refusedToResend = true }
            return aif_curl_seekfunc_cantseek
        case .bytes(let data, _):
            guard offset >= 0, offset <= Int64(data.count) else { return aif_curl_seekfunc_fail }
            upload = .bytes(data, offset: Int(offset))
            return aif_curl_seekfunc_ok
        case .file(let descriptor, _):
            return lseek(descriptor, off_t(offset), SEEK_SET) < 0 ? aif_curl_seekfunc_fail : aif_curl_seekfunc_ok
        }
    }

    /// libcurl is about to send the request, on a connection made or reused for it; returns
    /// whether it may.
    ///
    /// libcurl sends a request a second time when the connection it reused turns out to have
    /// closed before any byte of the answer: the server may have closed it idle, or after it
    /// read — and processed — the request. Only a request that is safe to repeat goes out
    /// again (``HTTPRequest/isIdempotent``, and a body that can be read again); any other ends
    /// here, before a byte of its second copy is sent, as a lost response.
    func willSendRequest() -> Bool {
        if isAwaitingAnswer, !request.isIdempotent || request.body.isStream {
            refusedToResend = true
            return false
        }
        sends += 1
        answerStarted = false
        return true
    }

    // MARK: - Response bytes

    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        answerStarted = true
        // A status line starts a new response (a redirect's target, or the real response after
        // `100 Continue`): keep only the headers of the last one.
        if bytes.count >= 5, bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50, bytes[4] == 0x2F {
            // `HTTP/2`: the origin multiplexes, which the loop learns from the first head
            // rather than the first whole answer (a stream's may never end).
            if bytes.count > 5, bytes[5] == 0x32 { answeredOverHTTP2() }
            headerBlock.removeAll()
            body.removeAll()
            reservedBody = false
            receiving = nil
            gathering = nil
            return
        }
        headerBlock.append(bytes)
    }

    /// Tells the loop, once, that the origin answers over HTTP/2 (unless it knew).
    @inline(never)
    private func answeredOverHTTP2() {
        guard !slotKnowsMultiplexing, slotOrigin != nil, let loop else { return }
        slotKnowsMultiplexing = true
        loop.noteAnswerOverHTTP2(self)
    }

    /// Whether any body byte of the current response has arrived.
    var hasReceivedBody: Bool { reservedBody }

    /// Keeps body bytes, or hands them to the request's body receiver when it took the body;
    /// returns `false` (to stop the transfer) once they pass the size limit, freeing what had
    /// arrived, or when the receiver refused them.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !reservedBody, let handle {
            reservedBody = true
            guard beginBody(handle) else { return false }
        }
        if let receiving {
            do {
                try receiving.receive(bytes)
                if gathering != nil, !inBurst, let multiHandle {
                    inBurst = true
                    multiHandle.loop.noteBurst(of: self)
                }
                return true
            } catch {
                receiverFailure = "\(error)"
                return false
            }
        }
        guard bytes.count <= maxBodySize - body.count else {
            exceededBodyLimit = true
            body.release()
            return false
        }
        body.append(bytes)
        return true
    }

    /// The loop's call at the end of a turn in which body bytes reached a gathering receiver.
    func endBurst() {
        inBurst = false
        gathering?.burstEnded()
    }

    /// At the first body byte: offers the body to the request's receiver, or makes room for it
    /// in memory. Returns `false` when the receiver refused the response.
    private func beginBody(_ handle: EasyHandle) -> Bool {
        if let receiver = request.bodyReceiver {
            do {
                let statusCode = handle.info(long: CURLINFO_RESPONSE_CODE)
                if try receiver.willReceiveBody(statusCode: statusCode, headers: HTTPHeaders(rawBlock: headerBlock.copyBytes())) {
                    receiving = receiver
                    gathering = receiver as? any GatheringBodyReceiver
                    return true
                }
            } catch {
                receiverFailure = "\(error)"
                return false
            }
        }
        let expected = handle.info(offset: CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        if expected > 0 && expected < 1 << 31 && expected <= maxBodySize {
            body.reserve(Int(expected))
        }
        return true
    }

    /// ``receiveBody(_:)`` for a transfer with a ``TransferControl``: refuses the bytes with
    /// libcurl's pause code while receiving should be paused (libcurl keeps them for later),
    /// and pauses once they overdraw the rate limit.
    func receiveSteeredBody(_ bytes: UnsafeRawBufferPointer, _ steering: TransferSteering) -> Int {
        guard steering.wantedMask & aif_curlpause_recv == 0 else {
            steering.pausedByCallback(aif_curlpause_recv)
            return aif_curl_writefunc_pause
        }
        guard receiveBody(bytes) else { return 0 }
        steering.received(bytes.count)
        if let handle, steering.wantedMask & aif_curlpause_recv != 0 { steering.apply(to: handle) }
        return bytes.count
    }

    // MARK: - Teardown

    /// Frees what the transfer holds besides its handle and response bytes: its host overrides
    /// and an open file. (A header list of its own stays with the handle: see
    /// ``EasyHandle/ownHeaders``.)
    func releaseResources() {
        if let connectToList {
            curl_slist_free_all(connectToList)
            self.connectToList = nil
        }
        switch upload {
        case .file(let descriptor, _): close(descriptor)
        case .form(let mime): curl_mime_free(mime)
        case .stream(let pipe): pipe.close()
        case .bytes, .none: break
        }
        upload = nil
        receiving = nil
        gathering = nil
    }
}

// MARK: - libcurl callbacks
//
// Plain C functions: `userdata` is the `EasyHandle`, which names its transfer of the moment,
// unretained (the loop's table keeps it alive for as long as the handle is in the multi handle).

func curlReceiveBody(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let buffer, let userdata, length > 0, let transfer = EasyHandle.transfer(of: userdata) else { return length }
    if let steering = transfer.steering {
        return transfer.receiveSteeredBody(UnsafeRawBufferPointer(start: buffer, count: length), steering)
    }
    // Fewer bytes than offered tells libcurl to stop (CURLE_WRITE_ERROR).
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
}

func curlReceiveHeader(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let buffer, let userdata, length > 0, let transfer = EasyHandle.transfer(of: userdata) else { return length }
    transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length))
    return length
}

func curlSendBody(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?) -> Int {
    guard let buffer, let userdata, let transfer = EasyHandle.transfer(of: userdata) else { return aif_curl_readfunc_abort }
    return transfer.readBody(into: buffer, capacity: size * count)
}

func curlSeekBody(_ userdata: UnsafeMutableRawPointer?, _ offset: curl_off_t, _ origin: Int32) -> Int32 {
    guard let userdata, origin == SEEK_SET, let transfer = EasyHandle.transfer(of: userdata) else { return aif_curl_seekfunc_cantseek }
    return transfer.seekBody(to: Int64(offset))
}

func curlWillSendRequest(
    _ userdata: UnsafeMutableRawPointer?, _ primaryIP: UnsafeMutablePointer<CChar>?, _ localIP: UnsafeMutablePointer<CChar>?, _ primaryPort: Int32,
    _ localPort: Int32
) -> Int32 {
    // A request that no transfer answers for is not sent (it cannot happen: a handle is out of
    // its multi handle before it lets go of its transfer).
    guard let userdata, let transfer = EasyHandle.transfer(of: userdata) else { return aif_curl_prereqfunc_abort }
    return transfer.willSendRequest() ? aif_curl_prereqfunc_ok : aif_curl_prereqfunc_abort
}

func curlReportProgress(
    _ userdata: UnsafeMutableRawPointer?,
    _ downloadTotal: curl_off_t,
    _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t,
    _ uploaded: curl_off_t
) -> Int32 {
    guard let userdata, let transfer = EasyHandle.transfer(of: userdata) else { return 0 }
    transfer.progress?(
        TransferProgress(
            bytesSent: transfer.streamsBody ? transfer.streamedBodyBytes : Int64(uploaded),
            totalBytesToSend: uploadTotal > 0 ? Int64(uploadTotal) : transfer.request.body.byteCount.map(Int64.init),
            bytesReceived: Int64(downloaded),
            totalBytesToReceive: downloadTotal > 0 ? Int64(downloadTotal) : nil
        )
    )
    return 0
}
