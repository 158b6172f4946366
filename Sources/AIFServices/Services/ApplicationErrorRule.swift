import Foundation

extension ServiceVeto {
    /// Recognises an application-level failure reported inside a successful response — the
    /// `{"code": 4001, "message": "coupon expired"}` in a `200` body many backends use — and turns
    /// it into a ``ServiceVeto``.
    ///
    /// A service declares it as its ``Service/applicationErrors``; a configured service with the
    /// `applicationErrors` key.
    public struct Rule: Sendable, Hashable {
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
        /// A service that declares its rule as ``Service/applicationErrors`` has it applied for
        /// it, on the body its decoder reads (the body is parsed once); this is for a
        /// ``Service/veto(_:)`` of your own that weighs more than the rule.
        ///
        /// - Parameter response: The response.
        /// - Returns: The veto, or `nil`.
        public func veto(_ response: HTTPResponse) -> ServiceVeto? {
            guard response.isSuccess, response.body.first == UInt8(ascii: "{"), let tape = try? JSONTape(parsing: [UInt8](response.body)) else { return nil }
            return veto(in: tape)
        }

        /// The veto for a body parsed already (the caller checked the status).
        func veto(in tape: JSONTape) -> ServiceVeto? {
            guard tape.tokens[0].kind == .object, let field = tape.member(codeField, of: 0), let code = tape.text(at: field), !successCodes.contains(code) else {
                return nil
            }
            let message = messageField.flatMap { tape.member($0, of: 0) }.flatMap { tape.text(at: $0) } ?? "no message"
            return ServiceVeto(code: code, message: message)
        }
    }
}
