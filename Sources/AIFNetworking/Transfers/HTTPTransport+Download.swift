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
    /// - A status that brings no file fails with ``DownloadError/Reason/httpStatus(_:)`` (the
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
    /// - Throws: ``DownloadError``, saying what failed and how many bytes are kept.
    public func download(
        _ request: HTTPRequest, to download: FileDownload, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(DownloadError) -> DownloadedFile {
        let url = request.url.absoluteString
        var restarted = false
        while true {
            let writer = try DownloadWriter(download, url: url)
            var attempt = request
            for (name, value) in writer.resumeHeaders { attempt.headers.set(name: name, value: value) }
            attempt.bodyReceiver = writer
            let kept = writer.byteCount
            let response: HTTPResponse
            do {
                response = try await send(attempt, progress: progress.map { report in
                    { @Sendable in
                        var whole = $0
                        let offset = writer.progressOffset
                        whole.bytesReceived += offset
                        whole.totalBytesToReceive = whole.totalBytesToReceive.map { $0 + offset }
                        report(whole)
                    }
                })
            } catch {
                throw writer.failure(.transport(error))
            }
            switch response.statusCode {
            case 200..<300:
                if !writer.tookBody {
                    // No body came: a 200 means an empty file; a 206 must carry its range.
                    guard response.statusCode != 206 else { throw writer.failure(.invalidResponse("the server's 206 answer has no body")) }
                    do { try writer.startOver() } catch { throw writer.failure(.file(error.description)) }
                }
                if let total = writer.totalBytes, writer.byteCount != total {
                    throw writer.failure(.invalidResponse("the file has \(writer.byteCount) of the \(total) bytes the server announced"))
                }
                return try finish(writer, response)
            case 416 where kept > 0:
                let total = ContentRange.unsatisfiedTotal(response.headers["Content-Range"]) ?? writer.record?.totalBytes
                if total == kept, writer.record != nil {
                    return try finish(writer, response)
                }
                guard !restarted else { throw writer.failure(.httpStatus(response)) }
                do { try writer.discardPartial() } catch { throw writer.failure(.file(error.description)) }
                writer.closeFile()
                restarted = true
            default:
                throw writer.failure(.httpStatus(response))
            }
        }
    }

    private func finish(_ writer: DownloadWriter, _ response: HTTPResponse) throws(DownloadError) -> DownloadedFile {
        let byteCount = writer.byteCount
        let resumedAt = writer.tookBody ? writer.resumedAt : byteCount
        let sha256 = try writer.complete()
        return DownloadedFile(url: writer.download.destination, byteCount: byteCount, resumedAt: resumedAt, sha256: sha256, response: response)
    }
}
