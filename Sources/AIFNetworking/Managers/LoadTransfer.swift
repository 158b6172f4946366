@_spi(CrossModule) import AIFTransport
/// What a manager's load moves besides its parameters: a body of its own (an upload), a
/// response body written to a file (a download) or handed to a reader as it comes (a stream),
/// progress reports, a transfer control. `nil` on ordinary loads, which pay nothing for it.
final class LoadTransfer: Sendable {
    let body: HTTPRequest.Body?
    let download: ManagerDownload?
    /// Takes a 2xx answer's body for the reader of a streamed load.
    let stream: StreamingBodyReceiver<APIError>?
    let progress: ProgressThrottle?
    let control: TransferControl?

    init(
        body: HTTPRequest.Body? = nil, download: ManagerDownload? = nil, stream: StreamingBodyReceiver<APIError>? = nil,
        progress: ProgressThrottle? = nil, control: TransferControl? = nil
    ) {
        self.body = body
        self.download = download
        self.stream = stream
        self.progress = progress
        self.control = control
    }

    /// The transport's progress callback for an attempt: throttled, and counting the bytes an
    /// earlier attempt of a download kept.
    func progressReporter(for writer: DownloadWriter?) -> (@Sendable (TransferProgress) -> Void)? {
        guard let progress else { return nil }
        guard let writer else { return { progress.report($0) } }
        return { progress.report(writer.wholeFile($0)) }
    }
}

/// A manager load's download across its attempts: each attempt opens the partial file anew
/// (resuming what the one before wrote), and the load keeps the finished file.
final class ManagerDownload: Sendable {
    private struct State {
        var writer: DownloadWriter?
        var restarted = false
        var file: FileDownload.File?
    }

    let target: FileDownload
    private let state = Locked(State())

    init(_ target: FileDownload) {
        self.target = target
    }

    /// Opens the partial file for the next attempt (closing the one before's).
    ///
    /// - Parameter identity: What the resume record must name to be resumed.
    func beginAttempt(identity: String) throws(FileDownload.Failure) -> DownloadWriter {
        let previous = state.withLock { state in
            defer { state.writer = nil }
            return state.writer
        }
        previous?.closeFile()
        let writer = try DownloadWriter(target, url: identity)
        state.withLock { $0.writer = writer }
        return writer
    }

    /// Whether the download may start over after a 416 (once per load).
    func restartOnce() -> Bool {
        state.withLock { state in
            defer { state.restarted = true }
            return !state.restarted
        }
    }

    /// Records the finished file.
    func finished(_ file: FileDownload.File) {
        state.withLock { $0.file = file }
    }

    /// The finished file, once the load succeeded.
    var file: FileDownload.File? {
        state.withLock { $0.file }
    }

    /// The load failed: closes the partial file, and removes it when the download asks, or when
    /// nothing could resume it.
    func abandon() {
        let writer = state.withLock { state in
            defer { state.writer = nil }
            return state.writer
        }
        _ = writer?.failure(.invalidResponse("the load failed"))
    }
}
