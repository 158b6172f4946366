import Foundation

extension HTTPTransport {
    /// Sends a request and returns once its response's body starts arriving (or the response
    /// ends, for one without a body), with the body to read as it comes.
    ///
    /// ```swift
    /// let response = try await CurlTransport.shared.stream(HTTPRequest(url: logURL))
    /// for try await line in response.body.lines {
    ///     print(line)
    /// }
    /// ```
    ///
    /// The body does not wait in memory beyond `bufferLimit` bytes: a reader that falls behind
    /// pauses the transfer (see ``ResponseBodyStream``). Redirects are followed first (their
    /// bodies are not streamed); any other status streams its body, so check
    /// ``StreamingResponse/statusCode``. The response size limit does not apply to a streamed
    /// body. Cancelling the calling task, or the task reading the body, cancels the transfer.
    ///
    /// - Parameters:
    ///   - request: The request. A ``TransferControl`` on it still suspends and paces the
    ///     transfer; its ``HTTPRequest/bodyReceiver`` is replaced.
    ///   - bufferLimit: How many bytes may wait for the reader before the transfer pauses;
    ///   1 MiB by default.
    /// - Returns: The status, headers and body stream.
    /// - Throws: ``TransportError`` when the request failed before its body began.
    public func stream(_ request: HTTPRequest, bufferLimit: Int = 1 << 20) async throws(TransportError) -> StreamingResponse {
        var request = request
        let control = request.control ?? TransferControl()
        request.control = control
        let buffer = StreamBuffer(limit: bufferLimit, control: control, url: request.location.text)
        let receiver = StreamingBodyReceiver(buffer)
        request.bodyReceiver = receiver
        let lifetime = StreamLifetime()
        let head = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<StreamingBodyReceiver.Head, TransportError>, Never>) in
                receiver.whenHeadArrives(continuation)
                let transfer = send(request, progress: nil) { result in
                    switch result {
                    case .success(let response):
                        receiver.deliverHead(.success(.init(statusCode: response.statusCode, headers: response.headers)))
                        // A body kept in memory (a redirect's, when none is followed).
                        if !response.body.isEmpty { buffer.append(response.body) }
                        buffer.finish(.success(()))
                    case .failure(let error):
                        receiver.deliverHead(.failure(error))
                        buffer.finish(.failure(error))
                    }
                }
                lifetime.attach(transfer)
            }
        } onCancel: {
            lifetime.cancel()
        }
        let arrived = try head.get()
        return StreamingResponse(statusCode: arrived.statusCode, headers: arrived.headers, body: ResponseBodyStream(buffer: buffer, lifetime: lifetime))
    }
}

/// Takes a streamed body for ``HTTPTransport/stream(_:bufferLimit:)``: tells the caller the
/// head when the body begins, and hands the chunks to the stream's buffer.
final class StreamingBodyReceiver: ResponseBodyReceiver {
    struct Head: Sendable {
        var statusCode: Int
        var headers: HTTPHeaders
    }

    private enum HeadState {
        case waiting(UnsafeContinuation<Result<Head, TransportError>, Never>?)
        case delivered
    }

    private let buffer: StreamBuffer
    private let head = Locked(HeadState.waiting(nil))

    init(_ buffer: StreamBuffer) {
        self.buffer = buffer
    }

    func whenHeadArrives(_ continuation: UnsafeContinuation<Result<Head, TransportError>, Never>) {
        head.withLock { $0 = .waiting(continuation) }
    }

    /// Resumes the caller with the head or the failure, the first time only.
    func deliverHead(_ outcome: Result<Head, TransportError>) {
        let continuation = head.withLock { state -> UnsafeContinuation<Result<Head, TransportError>, Never>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .delivered
            return continuation
        }
        continuation?.resume(returning: outcome)
    }

    func willReceiveBody(statusCode: Int, headers: HTTPHeaders) throws -> Bool {
        // A redirect's body stays with it; the redirect loop reads the next hop's.
        guard !(300..<400).contains(statusCode) else { return false }
        deliverHead(.success(Head(statusCode: statusCode, headers: headers)))
        return true
    }

    func receive(_ bytes: UnsafeRawBufferPointer) throws {
        buffer.append(Data(bytes))
    }
}
