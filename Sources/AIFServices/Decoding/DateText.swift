import Foundation
@_spi(CrossModule) import AIFTransport

/// Dates read from text, for ``FastJSONDecoder``'s string strategies.
enum DateText {
    /// An ISO 8601 date and time (fractional seconds and offsets allowed), or a date alone
    /// (midnight UTC); `nil` for anything else.
    static func iso8601(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        // A date alone: exactly `YYYY-MM-DD` (the format style would also take `2026-1-2`).
        guard text.utf8.count == 10, text.utf8.enumerated().allSatisfy({ index, byte in
            index == 4 || index == 7 ? byte == UInt8(ascii: "-") : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }) else { return nil }
        return try? Date(text, strategy: Date.ISO8601FormatStyle().year().month().day())
    }

    /// `text` read with a `DateFormatter` pattern; `nil` when it does not match.
    static func formatted(_ text: String, format: String) -> Date? {
        formatters.date(from: text, format: format)
    }

    /// The text as an error shows it: quoted, and cut after 40 characters.
    static func quoted(_ text: String) -> String {
        text.count <= 40 ? "\"\(text)\"" : "\"\(text.prefix(40))…\""
    }

    private static let formatters = Formatters()

    /// One formatter per pattern, made once and used under a lock: making one costs far more
    /// than a parse, and a formatter is not safe to use from two threads at once.
    private final class Formatters: @unchecked Sendable {
        // Unchecked: `byFormat` and the formatters in it are only reached under `lock`.
        private let lock = NSLock()
        private var byFormat: [String: DateFormatter] = [:]

        func date(from text: String, format: String) -> Date? {
            lock.withLock {
                let formatter = byFormat[format] ?? {
                    let made = DateFormatter()
                    made.locale = Locale(identifier: "en_US_POSIX")
                    made.timeZone = TimeZone(identifier: "UTC")
                    made.dateFormat = format
                    made.isLenient = false
                    byFormat[format] = made
                    return made
                }()
                return formatter.date(from: text)
            }
        }
    }
}
