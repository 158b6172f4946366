public import Foundation
@_spi(CrossModule) import AIFTransport

extension ServiceRegistry {
    /// Keeps signing timestamps in step with a server whose clock differs from ours.
    ///
    /// Feed it each response's `Date` header; once the server's clock is more than ``tolerance``
    /// away from the local one, ``offset`` holds the difference and ``context()`` signs with the
    /// corrected time. Thread-safe; one per service (or per host) is typical.
    public final class ClockSkew: Sendable {
        /// Differences up to this are ignored (a `Date` header has one-second resolution, and the
        /// response took time to arrive).
        public let tolerance: TimeInterval
        private let state = Locked(State())

        private struct State {
            var offset: TimeInterval = 0
            /// The last `Date` header parsed, and its value: a busy client sees the same header
            /// for a whole second, and comparing 29 bytes is cheaper than parsing them.
            var lastHeader = ""
            var lastDate = Date.distantPast
        }

        /// Creates a tracker.
        ///
        /// - Parameter tolerance: 5 seconds by default.
        public init(tolerance: TimeInterval = 5) {
            self.tolerance = tolerance
        }

        /// How far the server's clock is ahead of ours (negative: behind), in seconds; 0 while
        /// within tolerance.
        public var offset: TimeInterval {
            state.withLock { $0.offset }
        }

        /// Learns from a response.
        ///
        /// - Parameters:
        ///   - response: A response; its `Date` header (RFC 9110 IMF-fixdate) is read.
        ///   - receivedAt: When it arrived, by the local clock; now by default.
        public func record(_ response: HTTPResponse, receivedAt: Date = Date()) {
            guard let header = response.headers["Date"] else { return }
            let known = state.withLock { $0.lastHeader == header ? $0.lastDate : nil }
            if let known {
                record(serverDate: known, receivedAt: receivedAt)
            } else if let parsed = Self.parseHTTPDate(header) {
                state.withLock { state in
                    state.lastHeader = header
                    state.lastDate = parsed
                }
                record(serverDate: parsed, receivedAt: receivedAt)
            }
        }

        /// Learns from a server time read elsewhere.
        public func record(serverDate: Date, receivedAt: Date = Date()) {
            let difference = serverDate.timeIntervalSince(receivedAt)
            state.withLock { $0.offset = abs(difference) > tolerance ? difference.rounded() : 0 }
        }

        /// A signing context for now, corrected by ``offset``, with a fresh nonce.
        public func context() -> SigningContext {
            .now(clockOffset: offset)
        }

        /// Parses `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate, what servers send) by hand — a
        /// `DateFormatter` per response cost more than the rest of a request — and the two obsolete
        /// forms RFC 9110 asks recipients to accept through a formatter. An HTTP-date is printable
        /// ASCII, and nothing else reaches the formatter: Foundation's traps on some other text
        /// (found by `make fuzz`).
        static func parseHTTPDate(_ text: String) -> Date? {
            if let date = parseIMFFixdate(text) { return date }
            guard text.utf8.count <= 64, text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
            for format in ["EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = format
                if let date = formatter.date(from: text) { return date }
            }
            return nil
        }

        /// `Sun, 06 Nov 1994 08:49:37 GMT`: fixed positions, checked field by field.
        static func parseIMFFixdate(_ text: String) -> Date? {
            let bytes = Array(text.utf8)
            guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
                bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20,
                bytes[26...28].elementsEqual("GMT".utf8)
            else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var value = 0
                for byte in bytes[range] {
                    let digit = byte &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19), let minute = number(20..<22),
                let second = number(23..<25),
                let monthIndex = months.firstIndex(where: { $0.utf8.elementsEqual(bytes[8..<11]) }),
                (1...31).contains(day), hour < 24, minute < 60, second < 61
            else { return nil }
            // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
            let month = monthIndex + 1
            let shiftedYear = month <= 2 ? year - 1 : year
            let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
            let yearOfEra = shiftedYear - era * 400
            let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            let days = era * 146_097 + dayOfEra - 719_468
            return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
        }
    }
}
