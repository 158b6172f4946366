import Foundation

extension Duration {
    /// The duration in seconds, as a floating-point number (what `Date` arithmetic takes).
    /// Offered to the package's other modules as SPI (`@_spi(Support) import AIFNetworking`).
    @_spi(Support)
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
