/// A condition a request is sent under, which the transport checks on its own thread at the
/// last moment: a request that waited for a free connection may have become pointless meanwhile
/// (its credential was refused for a request that went before it).
///
/// ``CurlTransport`` asks ``allowsSending()`` just before it hands the request to libcurl —
/// after any wait for one of its host's connections — and ends a request it refuses with
/// ``TransportError/Code-swift.struct/withdrawn``, nothing sent. It tells
/// ``responseArrived(statusCode:)`` the status of the response before the request's connection
/// goes to the next request, so that the condition can change in time for that one. Other
/// transports may ignore conditions: they decide nothing a request needs to be correct, only
/// how few requests go out in vain.
package protocol SendingCondition: Sendable {
    /// Whether the request may still go out. Called on the transport's thread: it must be quick.
    func allowsSending() -> Bool
    /// The request's response came, with this status. Called on the transport's thread, before
    /// the connection it came on is given to another request.
    func responseArrived(statusCode: Int)
}
