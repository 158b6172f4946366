import Synchronization

/// Identifies one load: returned by `loadData()`, carried by its response or error, and used to
/// cancel it.
///
/// IDs come from an ``APIProxy``; each is unique within the process and greater than every ID
/// handed out before it.
public struct LoadID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number behind the ID.
    public let rawValue: UInt64

    /// Wraps a number; only proxies and tests need this.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Earlier IDs sort first.
    public static func < (lhs: LoadID, rhs: LoadID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `#42`.
    public var description: String { "#\(rawValue)" }
}

/// A counter shared by every proxy, so load IDs never repeat within a process.
let loadIDCounter = Atomic<UInt64>(0)
