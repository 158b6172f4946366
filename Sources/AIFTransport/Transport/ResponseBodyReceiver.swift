extension HTTPRequest {
    /// Takes a response body as it arrives, instead of the transport keeping it in memory: a file
    /// being downloaded, a stream being read as it comes.
    ///
    /// The transport calls it on its own thread, in order, and waits for each call: it must not
    /// block for long (writing to a local file is fine; waiting for a consumer is not). Set it on
    /// ``HTTPRequest/bodyReceiver``. Each response of the exchange is offered — the receiver takes
    /// the bodies it wants (a 200 or a 206) and leaves the others (an error page, a redirect) in
    /// memory, in ``HTTPResponse/body``, under the usual size limit. A body it takes has no size
    /// limit and leaves ``HTTPResponse/body`` empty.
    public protocol BodyReceiver: AnyObject, Sendable {
        /// The head of a response with a body has arrived.
        ///
        /// - Parameters:
        ///   - statusCode: Its status.
        ///   - headers: Its header fields.
        /// - Returns: Whether the body comes here; `false` keeps it in memory with the response.
        /// - Throws: To end the transfer at once, as failed with
        ///   ``TransportError/Code-swift.struct/bodyDestinationFailed`` and the error's description.
        func willReceiveBody(statusCode: Int, headers: HTTPHeaders) throws -> Bool

        /// The next bytes of a body it took.
        ///
        /// - Parameter bytes: Valid only during the call.
        /// - Throws: To end the transfer at once, as failed with
        ///   ``TransportError/Code-swift.struct/bodyDestinationFailed`` and the error's description.
        func receive(_ bytes: UnsafeRawBufferPointer) throws
    }
}

/// A body receiver that gathers the bytes libcurl hands over in one go (a read buffer's worth,
/// in pieces of at most 16 KiB) and passes them on together: the transport tells it when each
/// such burst has ended.
package protocol GatheringBodyReceiver: HTTPRequest.BodyReceiver {
    /// The pieces of the current burst have all been received (on the transport's thread).
    func burstEnded()
}
