import Foundation

/// Recognises an application-level failure reported inside a successful response — the
/// `{"code": 4001, "message": "coupon expired"}` in a `200` body many backends use — and turns
/// it into a ``ServiceVeto``.
///
/// A service returns `rule.veto(response)` from its ``Service/veto(_:)``; a configured service
/// sets it with the `applicationErrors` key.
public struct ApplicationErrorRule: Sendable, Hashable {
    /// The top-level field holding the code.
    public var codeField: String
    /// The top-level field holding the message, if any.
    public var messageField: String?
    /// The codes meaning success, as text (`0` and `"0"` are the same).
    public var successCodes: Set<String>

    /// Creates a rule.
    ///
    /// - Parameters:
    ///   - codeField: The field holding the code; `code` by default.
    ///   - messageField: The field holding the message; `message` by default.
    ///   - successCodes: The codes meaning success; `0` by default.
    public init(codeField: String = "code", messageField: String? = "message", successCodes: Set<String> = ["0"]) {
        self.codeField = codeField
        self.messageField = messageField
        self.successCodes = successCodes
    }

    /// The veto for a successful (2xx) response whose JSON body carries a code other than a
    /// success code; `nil` when the status is not 2xx (it fails on its status anyway), the body
    /// is not a JSON object, has no code, or a success code.
    ///
    /// - Parameter response: The response.
    /// - Returns: The veto, or `nil`.
    public func veto(_ response: HTTPResponse) -> ServiceVeto? {
        guard response.isSuccess, response.body.first == UInt8(ascii: "{"),
            let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let raw = object[codeField], !(raw is NSNull)
        else { return nil }
        let code = Self.text(raw)
        guard !successCodes.contains(code) else { return nil }
        let message = messageField.flatMap { object[$0] }.map(Self.text) ?? "no message"
        return ServiceVeto(code: code, message: message)
    }

    private static func text(_ value: Any) -> String {
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        default: "\(value)"
        }
    }
}
