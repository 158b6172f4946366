/// An HTTP request method.
///
/// An open set: the common methods are static members, and any other token can be written as a
/// string literal (`let method: HTTPMethod = "PROPFIND"`).
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method token as sent on the wire, in upper case for the standard methods.
    public let rawValue: String

    /// Creates a method from its token, used exactly as given.
    ///
    /// - Parameter rawValue: The method token, for example `"GET"` or `"PURGE"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a method from a string literal.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// The method token.
    public var description: String { rawValue }

    /// `GET`: fetch a representation.
    public static let get: HTTPMethod = "GET"
    /// `HEAD`: like `GET`, without the response body.
    public static let head: HTTPMethod = "HEAD"
    /// `POST`: submit data to the resource.
    public static let post: HTTPMethod = "POST"
    /// `PUT`: replace the resource.
    public static let put: HTTPMethod = "PUT"
    /// `DELETE`: remove the resource.
    public static let delete: HTTPMethod = "DELETE"
    /// `PATCH`: modify part of the resource.
    public static let patch: HTTPMethod = "PATCH"
    /// `OPTIONS`: ask which options the resource supports.
    public static let options: HTTPMethod = "OPTIONS"

    /// Whether the method is safe (RFC 9110 §9.2.1): read-only by definition — `GET`, `HEAD`,
    /// `OPTIONS` and `TRACE`. A safe method is idempotent too.
    public var isSafe: Bool {
        switch rawValue {
        case "GET", "HEAD", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// Whether the method is idempotent (RFC 9110 §9.2.2): a request sent twice with it has the
    /// effect of one — `GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT` and `DELETE`. Method tokens are
    /// case-sensitive: `get` is another method, and not one of these.
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": true
        default: false
        }
    }
}
