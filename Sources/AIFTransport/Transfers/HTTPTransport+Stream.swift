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
    /// pauses the transfer (see ``HTTPResponse/Streaming/Body``). Redirects are followed first (their
    /// bodies are not streamed); any other status streams its body, so check
    /// ``HTTPResponse/Streaming/statusCode``. The response size limit does not apply to a streamed
    /// body. Cancelling the calling task, or the task reading the body, cancels the transfer.
    ///
    /// - Parameters:
    ///   - request: The request. A ``TransferControl`` on it still suspends and paces the
    ///     transfer; its ``HTTPRequest/bodyReceiver`` is replaced.
    ///   - bufferLimit: How many bytes may wait for the reader before the transfer pauses;
    ///   1 MiB by default.
    /// - Returns: The status, headers and body stream.
    /// - Throws: ``TransportError`` when the request failed before its body began.
    public func stream(_ request: HTTPRequest, bufferLimit: Int = 1 << 20) async throws(TransportError) -> HTTPResponse.Streaming {
        var request = request
        let control = request.control ?? TransferControl.forStreamReader()
        request.control = control
        let buffer = StreamBuffer(limit: bufferLimit, control: control, url: request.location.text)
        let receiver = StreamingBodyReceiver<TransportError>(buffer, streaming: .everyStatus)
        request.bodyReceiver = receiver
        let lifetime = StreamLifetime()
        let head = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<StreamingBodyReceiver<TransportError>.Head, TransportError>, Never>) in
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
        return HTTPResponse.Streaming(statusCode: arrived.statusCode, headers: arrived.headers, body: HTTPResponse.Streaming.Body(buffer: buffer, lifetime: lifetime))
    }
}

/// Takes a streamed body — for ``HTTPTransport/stream(_:bufferLimit:)``, or a manager's
/// `APIManager.stream(_:bufferLimit:control:)` — telling the caller the head when the body
/// begins, and handing the chunks to the stream's buffer. `Failure` is what the caller is told
/// when no body comes.
package final class StreamingBodyReceiver<Failure: Error>: GatheringBodyReceiver {
    package struct Head: Sendable {
        package var statusCode: Int
        package var headers: HTTPHeaders

        package init(statusCode: Int, headers: HTTPHeaders) {
            self.statusCode = statusCode
            self.headers = headers
        }
    }

    /// Which responses' bodies are streamed (the others are kept in memory, with the response).
    package enum Streamed: Sendable {
        /// Any but a redirect's (which the redirect loop reads): the caller checks the status.
        case everyStatus
        /// A 2xx answer's alone: the load's retries, credential renewal and error handling
        /// deal with the others, whose bodies they read, before any body is streamed.
        case successOnly
    }

    private enum HeadState {
        case waiting(UnsafeContinuation<Result<Head, Failure>, Never>?)
        case delivered(tookBody: Bool)
    }

    private let buffer: StreamBuffer
    private let streamed: Streamed
    private let head = Locked(HeadState.waiting(nil))

    package init(_ buffer: StreamBuffer, streaming streamed: Streamed) {
        self.buffer = buffer
        self.streamed = streamed
    }

    /// Whether a response's body came to the stream: from then on the load cannot be retried.
    package var tookBody: Bool {
        head.withLock { state in
            if case .delivered(let tookBody) = state { tookBody } else { false }
        }
    }

    package func whenHeadArrives(_ continuation: UnsafeContinuation<Result<Head, Failure>, Never>) {
        head.withLock { $0 = .waiting(continuation) }
    }

    /// Resumes the caller with the head or the failure, the first time only.
    package func deliverHead(_ outcome: Result<Head, Failure>) {
        deliverHead(outcome, tookBody: false)
    }

    private func deliverHead(_ outcome: Result<Head, Failure>, tookBody: Bool) {
        let continuation = head.withLock { state -> UnsafeContinuation<Result<Head, Failure>, Never>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .delivered(tookBody: tookBody)
            return continuation
        }
        continuation?.resume(returning: outcome)
    }

    package func willReceiveBody(statusCode: Int, headers: HTTPHeaders) throws -> Bool {
        switch streamed {
        // A redirect's body stays with it; the redirect loop reads the next hop's.
        case .everyStatus: guard !(300..<400).contains(statusCode) else { return false }
        case .successOnly: guard (200..<300).contains(statusCode) else { return false }
        }
        deliverHead(.success(Head(statusCode: statusCode, headers: headers)), tookBody: true)
        return true
    }

    package func receive(_ bytes: UnsafeRawBufferPointer) throws {
        buffer.append(bytes)
    }

    package func burstEnded() {
        buffer.endOfBurst()
    }
}
