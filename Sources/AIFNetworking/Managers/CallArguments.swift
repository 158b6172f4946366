package import Foundation
@_spi(CrossModule) import AIFTransport

/// Everything one call of an endpoint carries apart from the endpoint itself: its parameters,
/// headers, query items, and a body — an `Encodable` value, a multipart form — or a file to
/// download into. A typed interface's method turns its arguments into one
/// (`AIFNetworkingInterfaces`); a manager made for them loads them (``APIManager/loadData()``).
package struct CallArguments: Sendable {
    /// The parameters: they fill the path's placeholders, and go in the query or the body as
    /// the endpoint's method says.
    package var parameters: Parameters = [:]
    /// Headers over the endpoint's.
    package var headers = HTTPHeaders()
    /// Query items after those the parameters make.
    package var query: [URLQueryItem] = []
    /// The body's value, encoded as the endpoint says.
    package var body: (any Encodable & Sendable)?
    /// A multipart form sent as the body.
    package var form: HTTPRequest.MultipartForm?
    /// A body sent as it is (an OpenAPI client's), with its own `Content-Type` among the headers.
    package var rawBody: HTTPRequest.Body?
    /// How many bytes of a streamed response may wait for the reader.
    package var bufferLimit = 1 << 20
    /// Where a download goes (the endpoint's content is then ``NoContent``).
    package var download: FileDownload?
    /// Suspends, resumes and paces the transfer.
    package var control: TransferControl?
    /// Why the arguments cannot be sent (an argument that did not convert), which fails the
    /// load before anything is sent.
    package var failure: String?

    package init() {}

    /// The headers, query items and body as a load adds them to its endpoint.
    var additions: CallAdditions {
        CallAdditions(headers: headers, query: query, body: body)
    }

    /// The transfer a load of these arguments moves besides its parameters, `nil` for none.
    ///
    /// - Parameter progress: Progress reports, when someone follows them.
    func transfer(progress: ProgressThrottle?) -> LoadTransfer? {
        if let form { return LoadTransfer(body: .multipart(form), progress: progress, control: control) }
        if let rawBody { return LoadTransfer(body: rawBody, progress: progress, control: control) }
        if let download { return LoadTransfer(download: ManagerDownload(download), progress: progress, control: control) }
        if control != nil { return LoadTransfer(control: control) }
        return nil
    }
}

extension APIManager {
    /// Loads a call's arguments and returns the decoded response (a download's go through
    /// ``download(_:)`` instead).
    ///
    /// - Parameter arguments: The call's parameters, headers, query items and body.
    /// - Returns: The response.
    /// - Throws: ``APIError``; ``APIError/Kind/cancelled`` when cancelled.
    package func load(_ arguments: CallArguments) async throws(APIError) -> APIResponse<Content> {
        try await load(arguments.parameters, transfer: arguments.transfer(progress: nil), call: arguments.additions)
    }

    /// Starts a load of the arguments this manager was made for; the delegate hears its
    /// progress (an upload's or a download's) and its outcome.
    func loadData(_ arguments: CallArguments) -> LoadID {
        if let failure = arguments.failure { return failWithoutSending(.invalidParameters, SourceUnreachable(failure), onStart: nil) }
        let id = Locked<LoadID?>(nil)
        let transfer = arguments.transfer(progress: arguments.form != nil || arguments.download != nil ? delegateProgress(id) : nil)
        return loadData(with: arguments.parameters, onStart: { started in id.withLock { $0 = started } }, transfer: transfer, call: arguments.additions)
    }
}

extension APIManager where Content == NoContent {
    /// Downloads a call's response body to the file its arguments name.
    ///
    /// - Parameter arguments: The call's parameters, headers and query items, and the download's target.
    /// - Returns: The finished file.
    /// - Throws: ``APIError``, as ``download(_:to:control:progress:)`` does.
    package func download(_ arguments: CallArguments) async throws(APIError) -> FileDownload.File {
        guard let target = arguments.download else { preconditionFailure("a download's arguments name its target") }
        return try await download(arguments.parameters, to: target, control: arguments.control, progress: nil, call: arguments.additions)
    }

    /// Streams a call's response body, as ``stream(_:bufferLimit:control:)`` does.
    ///
    /// - Parameter arguments: The call's parameters, headers and query items.
    /// - Returns: The status, headers and body stream.
    /// - Throws: ``APIError`` when the load failed before its body began.
    package func stream(_ arguments: CallArguments) async throws(APIError) -> HTTPResponse.Streaming {
        try await stream(
            arguments.parameters, bufferLimit: arguments.bufferLimit, control: arguments.control, call: arguments.additions,
            body: arguments.form.map { .multipart($0) } ?? arguments.rawBody)
    }
}
