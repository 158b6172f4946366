import Foundation

extension HTTPTransport {
    /// Downloads `request`'s response body to a file, streamed as it arrives (memory stays
    /// flat whatever the size), resuming what an earlier download to the same destination
    /// left, and moves the file into place only when it is complete and checked.
    ///
    /// ```swift
    /// let file = try await CurlTransport.shared.download(
    ///     HTTPRequest(url: URL(string: "https://example.com/big.iso")!),
    ///     to: FileDownload(to: URL(fileURLWithPath: "/tmp/big.iso")))
    /// print(file.byteCount, "bytes;", file.resumedAt, "of them from an earlier attempt")
    /// ```
    ///
    /// - A partial file with a record of its origin (same URL, an `ETag` or `Last-Modified`)
    ///   is resumed: the request gets `Range: bytes=N-` and `If-Range`. A 206 appends; a 200
    ///   (the resource changed, or the server ignores ranges) starts the file over; a 416 on a
    ///   partial file that holds the whole size is success; any other 416 starts over once.
    /// - A status that brings no file fails with ``FileDownload/Failure/Reason/httpStatus(_:)`` (the
    ///   body stays in the response, in memory, under the transport's size limit).
    /// - Cancelling the calling task cancels the transfer; the partial file is kept (or
    ///   removed, as ``FileDownload/keepsPartialFile`` says).
    ///
    /// - Parameters:
    ///   - request: The request; the download adds the range headers (after any signing: a
    ///     scheme that covers every header must sign them itself).
    ///   - download: The destination and its options.
    ///   - progress: Called as bytes arrive, with the bytes of the whole file (those of an
    ///     earlier attempt included) and its total when known; on the transport's thread.
    /// - Returns: The finished file.
    /// - Throws: ``FileDownload/Failure``, saying what failed and how many bytes are kept.
    public func download(
        _ request: HTTPRequest, to download: FileDownload, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(FileDownload.Failure) -> FileDownload.File {
        let url = request.url.absoluteString
        var restarted = false
        while true {
            let writer = try DownloadWriter(download, url: url)
            var attempt = request
            for (name, value) in writer.resumeHeaders { attempt.headers.set(name: name, value: value) }
            attempt.bodyReceiver = writer
            let response: HTTPResponse
            do {
                response = try await send(attempt, progress: progress.map { report in { @Sendable in report(writer.wholeFile($0)) } })
            } catch {
                throw writer.failure(.transport(error))
            }
            switch try writer.verdict(on: response) {
            case .finished(let file):
                return file
            case .startOver:
                guard !restarted else { throw writer.failure(.httpStatus(response)) }
                restarted = true
            case .notTheFile:
                throw writer.failure(.httpStatus(response))
            }
        }
    }
}
