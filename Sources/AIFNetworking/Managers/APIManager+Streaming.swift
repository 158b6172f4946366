extension APIManager where Content == NoContent {
    /// Loads, and hands over the response's body as it arrives — server-sent events, a log, a
    /// feed of lines — as a load of this manager: the service resolved, the parameters, the
    /// credential of its ``/AIFServices/Authenticator``, signing, redirects within the service's origin
    /// followed and signed afresh, the service's retry policy and a credential refused and
    /// renewed, the observers, a load ID to cancel it by — all before the first byte of the
    /// body. It returns when a 2xx answer's body begins (or the answer ends, for one without
    /// a body).
    ///
    /// ```swift
    /// let prices = APIManager<NoContent>(Endpoint(service: "shop", path: "events", timeouts: HTTPRequest.Timeouts(total: nil)))
    /// let response = try await prices.stream(["goods": 42])
    /// for try await event in response.body.serverSentEvents where event.type == "price" {
    ///     print(event.data)
    /// }
    /// ```
    ///
    /// A status outside 200–299 fails the load as any load's would, once its retries are spent
    /// (its body, in memory, in the error's response). Once the body has begun nothing is sent
    /// again: a failure that cuts it short ends the body stream with its ``/AIFTransport/TransportError``.
    /// The body does not wait in memory beyond `bufferLimit` bytes: a reader that falls
    /// behind pauses the transfer. The load's total timeout covers the whole body: give a
    /// stream that stays open its own ``/AIFTransport/HTTPRequest/Timeouts`` (`total: nil`, and `idle` when the server
    /// sends keep-alive comments). Cancelling the calling task before the body begins, the
    /// task reading it, or the load by ID (``loadsInFlight``) cancels the transfer;
    /// so does letting go of the body unread.
    ///
    /// - Parameters:
    ///   - parameters: The load's parameters (the param source is not asked).
    ///   - bufferLimit: How many bytes may wait for the reader before the transfer pauses;
    ///     1 MiB by default.
    ///   - control: Suspends, resumes and paces the transfer; one of its own by default.
    /// - Returns: The status, headers and body stream.
    /// - Throws: ``APIError`` when the load failed before its body began.
    public func stream(_ parameters: Parameters = [:], bufferLimit: Int = 1 << 20, control: TransferControl? = nil) async throws(APIError) -> HTTPResponse.Streaming {
        try await stream(parameters, bufferLimit: bufferLimit, control: control, call: .none)
    }

    /// Streams with headers or query items of this call's own, and a body of its own (see
    /// ``stream(_:bufferLimit:control:)``).
    func stream(
        _ parameters: Parameters, bufferLimit: Int, control: TransferControl?, call: CallAdditions, body: HTTPRequest.Body? = nil
    ) async throws(APIError) -> HTTPResponse.Streaming {
        let control = control ?? TransferControl.forStreamReader()
        let buffer = StreamBuffer(limit: bufferLimit, control: control, url: "service \(serviceName), path \(path)")
        let receiver = StreamingBodyReceiver<APIError>(buffer, streaming: .successOnly)
        let transfer = LoadTransfer(body: body, stream: receiver, control: control)
        let lifetime = StreamLifetime()
        let head = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<StreamingBodyReceiver<APIError>.Head, APIError>, Never>) in
                receiver.whenHeadArrives(continuation)
                let loading = Task { [self] in
                    do throws(APIError) {
                        let response = try await load(parameters, transfer: transfer, call: call)
                        // An answer without a body never reached the receiver: it is its own head.
                        receiver.deliverHead(.success(.init(statusCode: response.statusCode, headers: response.headers)))
                        buffer.finish(.success(()))
                    } catch {
                        receiver.deliverHead(.failure(error))
                        buffer.finish(.failure(Self.bodyFailure(error, url: buffer.url)))
                    }
                }
                lifetime.attach(TaskCancellation(task: loading))
            }
        } onCancel: {
            lifetime.cancel()
        }
        let arrived = try head.get()
        return HTTPResponse.Streaming(statusCode: arrived.statusCode, headers: arrived.headers, body: HTTPResponse.Streaming.Body(buffer: buffer, lifetime: lifetime))
    }

    /// What the body's reader is told when the load fails after the body began: the
    /// transport's error underneath, or one that carries the load's message.
    private static func bodyFailure(_ error: APIError, url: String) -> TransportError {
        if let transport = error.underlyingError as? TransportError { return transport }
        if error.kind == .cancelled { return TransportError(.cancelled, url: url, detail: error.message) }
        return TransportError(.other, url: url, detail: error.message)
    }
}

/// Cancels a task, as a transfer is cancelled.
private struct TaskCancellation: CancellableTransfer {
    let task: Task<Void, Never>

    func cancel() {
        task.cancel()
    }
}
