extension APIProxy {
    /// A name a caller attaches to loads so it can cancel them together (one per screen, one per
    /// server request being handled, …): ``APIProxy/cancel(group:)`` cancels them.
    public struct LoadGroup: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name.
        public let rawValue: String

        /// Creates a group from its name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Creates a group from its name.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// Creates a group from a string literal.
        public init(stringLiteral value: String) {
            self.rawValue = value
        }

        /// The name.
        public var description: String { rawValue }
    }
}
