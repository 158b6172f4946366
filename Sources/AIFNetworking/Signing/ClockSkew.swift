import Foundation

/// Keeps signing timestamps in step with a server whose clock differs from ours.
///
/// Feed it each response's `Date` header; once the server's clock is more than ``tolerance``
/// away from the local one, ``offset`` holds the difference and ``context()`` signs with the
/// corrected time. Thread-safe; one per service (or per host) is typical.
public final class ClockSkew: Sendable {
    /// Differences up to this are ignored (a `Date` header has one-second resolution, and the
    /// response took time to arrive).
    public let tolerance: TimeInterval
    private let state = Locked<TimeInterval>(0)

    /// Creates a tracker.
    ///
    /// - Parameter tolerance: 5 seconds by default.
    public init(tolerance: TimeInterval = 5) {
        self.tolerance = tolerance
    }

    /// How far the server's clock is ahead of ours (negative: behind), in seconds; 0 while
    /// within tolerance.
    public var offset: TimeInterval {
        state.withLock { $0 }
    }

    /// Learns from a response.
    ///
    /// - Parameters:
    ///   - response: A response; its `Date` header (RFC 9110 IMF-fixdate) is read.
    ///   - receivedAt: When it arrived, by the local clock; now by default.
    public func record(_ response: HTTPResponse, receivedAt: Date = Date()) {
        guard let header = response.headers["Date"], let serverDate = Self.parseHTTPDate(header) else { return }
        record(serverDate: serverDate, receivedAt: receivedAt)
    }

    /// Learns from a server time read elsewhere.
    public func record(serverDate: Date, receivedAt: Date = Date()) {
        let difference = serverDate.timeIntervalSince(receivedAt)
        state.withLock { $0 = abs(difference) > tolerance ? difference.rounded() : 0 }
    }

    /// A signing context for now, corrected by ``offset``, with a fresh nonce.
    public func context() -> SigningContext {
        .now(clockOffset: offset)
    }

    /// Parses `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
