/// The name a service is registered and resolved by. An open set: declare your own as static
/// members in an extension (`extension ServiceName { static let shop: ServiceName = "shop" }`).
public struct ServiceName: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name as text.
    public let rawValue: String

    /// Creates a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a name from a literal.
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    /// The name.
    public var description: String { rawValue }
    /// Orders names alphabetically (for listing the known ones).
    public static func < (lhs: ServiceName, rhs: ServiceName) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension ServiceEnvironment {
    /// The name of one of a service's environments. `online` and `offline` are AIFNetworking's
    /// classic pair; any other name (`staging`, `local`) works the same way.
    public struct Name: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name as text.
        public let rawValue: String

        /// Creates a name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a name from a literal.
        public init(stringLiteral value: String) { self.init(rawValue: value) }
        /// The name.
        public var description: String { rawValue }
        /// Orders names alphabetically.
        public static func < (lhs: Name, rhs: Name) -> Bool { lhs.rawValue < rhs.rawValue }

        /// Production.
        public static let online: Name = "online"
        /// The test backend.
        public static let offline: Name = "offline"
    }
}
