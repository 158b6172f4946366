package import Foundation

extension Duration {
    /// The duration in seconds, as a floating-point number (what `Date` arithmetic takes).
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
