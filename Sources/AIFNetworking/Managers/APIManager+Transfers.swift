@_spi(CrossModule) import AIFTransport
extension APIManager {
    /// Loads with a body of its own — a file, a multipart form, a stream — instead of the
    /// parameters encoded as the body: an upload, with everything a load has (the service,
    /// signing, retries, the load ID, cancellation, hooks). The parameters go in the query
    /// string.
    ///
    /// ```swift
    /// var form = HTTPRequest.MultipartForm()
    /// form.appendFile("photo", at: "/tmp/IMG_0042.jpg")
    /// let answer = try await avatarUpload.load(["user": 42], sending: .multipart(form)) { progress in
    ///     print(progress.fractionCompleted ?? 0, progress.bytesPerSecond ?? 0)
    /// }
    /// ```
    ///
    /// A file body is signed over its digest; a form or a stream cannot be by a scheme that
    /// hashes the body (the load then fails with a ``APIError/Kind/configuration`` error that
    /// says why). A retry sends a file or a form again; a stream is sent once.
    ///
    /// - Parameters:
    ///   - parameters: The load's parameters (the param source is not asked).
    ///   - body: What to send.
    ///   - progress: Told of the bytes sent and received, at most ten times a second (and at
    ///     the end), with the throughput; on the transport's thread. See also
    ///     ``/AIFTransport/TransferProgress/makeStream()``.
    ///   - control: Suspends, resumes and paces the transfer; none by default.
    /// - Returns: The decoded response.
    /// - Throws: ``APIError``; ``APIError/Kind/cancelled`` when cancelled.
    public func load(
        _ parameters: Parameters = [:], sending body: HTTPRequest.Body, control: TransferControl? = nil,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(APIError) -> APIResponse<Content> {
        try await load(parameters, transfer: LoadTransfer(body: body, progress: progress.map { ProgressThrottle(deliver: $0) }, control: control))
    }

    /// Starts a load with a body of its own (an upload; see ``load(_:sending:control:progress:)``);
    /// the delegate hears its progress and its outcome.
    ///
    /// - Parameters:
    ///   - parameters: The load's parameters (the param source is not asked).
    ///   - body: What to send.
    ///   - control: Suspends, resumes and paces the transfer; none by default.
    /// - Returns: The load's ID, to cancel it.
    @discardableResult
    public func loadData(with parameters: Parameters, sending body: HTTPRequest.Body, control: TransferControl? = nil) -> LoadID {
        let id = Locked<LoadID?>(nil)
        return loadData(with: parameters, onStart: { started in id.withLock { $0 = started } }, transfer: LoadTransfer(body: body, progress: delegateProgress(id), control: control))
    }

    /// Progress for the delegate face: throttled, told on the callback executor.
    /// - Parameter id: The load's ID, known once it has started.
    func delegateProgress(_ id: Locked<LoadID?>) -> ProgressThrottle {
        let reference = WeakReference(self)
        return ProgressThrottle { progress in
            guard let manager = reference.object, let loadID = id.withLock({ $0 }) else { return }
            manager.callbackExecutor.run {
                guard let manager = reference.object else { return }
                manager.delegate?.manager(manager, didReportProgress: progress, loadID: loadID)
            }
        }
    }
}

extension APIManager where Content == NoContent {
    /// Downloads the response body to a file, as a load of this manager: the service resolved,
    /// the request signed (with its `Range` and `If-Range` in place before signing), a request
    /// ID, cancellation by ID or group, and the service's retries — a retry resumes the
    /// partial file instead of starting over, as does a later download to the same destination
    /// (in this process or another: the record beside the partial file names the load by
    /// service, environment, method and parameters, since each attempt's signed URL differs).
    ///
    /// ```swift
    /// let manual = APIManager<NoContent>(Endpoint(service: "shop", path: "manuals/{id}"))
    /// let file = try await manual.download(["id": 7], to: FileDownload(to: URL(fileURLWithPath: "/tmp/manual.pdf")))
    /// ```
    ///
    /// The body goes to the file, never to memory, whatever its size; a status that brings no
    /// file fails the load as any load's would (its body, in memory, in the error's response).
    ///
    /// - Parameters:
    ///   - parameters: The load's parameters (the param source is not asked).
    ///   - target: The destination and its options.
    ///   - control: Suspends, resumes and paces the transfer; none by default.
    ///   - progress: Told of the whole file's bytes (those an earlier attempt kept included),
    ///     at most ten times a second and at the end, with the throughput.
    /// - Returns: The finished file.
    /// - Throws: ``APIError``: ``APIError/Kind/transport`` for the network or the file system
    ///   (its underlying error a ``/AIFTransport/FileDownload/Failure`` for the latter), ``APIError/Kind/invalidResponse``
    ///   for a checksum or size mismatch, and the usual kinds otherwise.
    public func download(
        _ parameters: Parameters = [:], to target: FileDownload, control: TransferControl? = nil,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(APIError) -> FileDownload.File {
        try await download(parameters, to: target, control: control, progress: progress, call: .none)
    }

    /// Downloads with headers or query items of this call's own (see ``download(_:to:control:progress:)``).
    func download(
        _ parameters: Parameters, to target: FileDownload, control: TransferControl?, progress: (@Sendable (TransferProgress) -> Void)?, call: CallAdditions
    ) async throws(APIError) -> FileDownload.File {
        let download = ManagerDownload(target)
        let transfer = LoadTransfer(download: download, progress: progress.map { ProgressThrottle(deliver: $0) }, control: control)
        // A failed load's partial file is abandoned by the load's pipeline.
        let response = try await load(parameters, transfer: transfer, call: call)
        guard let file = download.file else {
            // Only a download that finished concludes with success.
            throw APIError(.invalidResponse, loadID: response.loadID, service: serviceName, path: path, message: "the load ended without a file")
        }
        return file
    }

    /// Starts a download to a file (see ``download(_:to:control:progress:)``); the delegate
    /// hears its progress, then success (the file is at `target`'s destination) or failure.
    ///
    /// - Parameters:
    ///   - parameters: The load's parameters (the param source is not asked).
    ///   - target: The destination and its options.
    ///   - control: Suspends, resumes and paces the transfer; none by default.
    /// - Returns: The load's ID, to cancel it.
    @discardableResult
    public func downloadData(with parameters: Parameters, to target: FileDownload, control: TransferControl? = nil) -> LoadID {
        let id = Locked<LoadID?>(nil)
        return loadData(
            with: parameters, onStart: { started in id.withLock { $0 = started } }, transfer: LoadTransfer(download: ManagerDownload(target), progress: delegateProgress(id), control: control))
    }
}
