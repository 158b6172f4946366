import Foundation

extension ServiceVeto {
    /// Recognises an application-level failure reported inside a successful response — the
    /// `{"code": 4001, "message": "coupon expired"}` in a `200` body many backends use, or the
    /// `{"ok": false, "error": "channel_not_found"}` of Slack and APIs like it — and turns it
    /// into a ``ServiceVeto``.
    ///
    /// A service declares it as its ``Service/applicationErrors``; a configured service with the
    /// `applicationErrors` key (`codeField`, `messageField`, `successCodes`; or `successFlag`,
    /// `errorField`, `messageField`).
    ///
    /// ```swift
    /// let numbered = ServiceVeto.Rule(codeField: "code", messageField: "message", successCodes: ["0"])
    /// let slack = ServiceVeto.Rule.successFlag("ok", errorField: "error")
    /// ```
    ///
    /// A rule that could refuse every answer — no success code, an empty field name — is a
    /// configuration error: the registry refuses the service's loads with it
    /// (``ServiceError/invalidConfiguration(service:reason:)``), and a config file saying so
    /// does not load.
    public struct Rule: Sendable, Hashable {
        /// How a body says it succeeded.
        public enum Success: Sendable, Hashable {
            /// The field holds a code, and these codes mean success. Codes are compared as
            /// text: `0` and `"0"` are the same code, `4001.0` is `4001`, and a boolean is `true`
            /// or `false` (or `1` or `0`).
            case codes(Set<String>)
            /// The field holds a boolean: `true` is a success, `false` a refusal (Slack's `ok`).
            /// A string `"true"` or `"false"` reads the same; a field that is absent or holds
            /// anything else says nothing.
            case flag
        }

        /// The top-level field that says whether the body succeeded: its code, or its flag.
        public var field: String
        /// How ``field`` says it.
        public var success: Success
        /// The top-level field holding the refusal's code when ``field`` is a flag (Slack's
        /// `error`: `channel_not_found`); `nil` for a coded rule, whose code is ``field``'s.
        public var errorField: String?
        /// The top-level field holding the refusal's message in plain words, if any; without
        /// one, the refusal's code is its message.
        public var messageField: String?

        /// Where a successful body lists warnings beside its content, as a dotted path of
        /// members (Slack's `response_metadata.warnings`): a string or an array of strings, which
        /// a load's response carries (`APIResponse.warnings`) without any model decoding them.
        /// `nil` by default.
        public var warningsField: String?

        /// Creates a rule of codes: a body whose `codeField` holds another code than one of
        /// `successCodes` is refused.
        ///
        /// - Parameters:
        ///   - codeField: The field holding the code; `code` by default.
        ///   - messageField: The field holding the message; `message` by default.
        ///   - successCodes: The codes meaning success; `0` by default.
        ///   - warningsField: Where a success lists warnings (``warningsField``), if it does.
        public init(codeField: String = "code", messageField: String? = "message", successCodes: Set<String> = ["0"], warningsField: String? = nil) {
            field = codeField
            success = .codes(successCodes)
            errorField = nil
            self.messageField = messageField
            self.warningsField = warningsField
        }

        /// A rule of a success flag: a body whose `field` is `false` is refused, its code read
        /// from `errorField`.
        ///
        /// - Parameters:
        ///   - field: The boolean field; `ok` by default.
        ///   - errorField: The field holding the refusal's code; `error` by default.
        ///   - messageField: The field holding a message beside the code, if the API sends one.
        ///   - warningsField: Where a success lists warnings (``warningsField``), if it does.
        /// - Returns: The rule.
        public static func successFlag(
            _ field: String = "ok", errorField: String? = "error", messageField: String? = nil, warningsField: String? = nil
        ) -> Rule {
            var rule = Rule(codeField: field, messageField: messageField, successCodes: [])
            rule.success = .flag
            rule.errorField = errorField
            rule.warningsField = warningsField
            return rule
        }

        /// What is wrong with the rule, in plain words: a rule that would refuse every answer
        /// or read nothing; `nil` for a sound rule.
        public var problem: String? {
            if field.isEmpty { return "the field that says whether a body succeeded has no name" }
            if errorField?.isEmpty == true { return "the error field has an empty name" }
            if messageField?.isEmpty == true { return "the message field has an empty name" }
            if let warningsField, warningsField.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
                return "the warnings field \"\(warningsField)\" is not a member name or a dotted path of member names"
            }
            guard case .codes(let codes) = success else { return nil }
            if codes.isEmpty { return "no success code is given, so every answer would be refused" }
            if let blank = codes.sorted().first(where: { $0.trimmingCharacters(in: .whitespacesAndNewlines) != $0 || $0.isEmpty }) {
                return "the success code \"\(blank)\" is blank or has spaces around it, which no JSON number or boolean reads as"
            }
            return nil
        }

        /// The veto for a successful (2xx) response whose JSON body says it failed; `nil` when
        /// the status is not 2xx (it fails on its status anyway), the body is not a JSON object,
        /// or says nothing of failing.
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

        /// The warnings of a body parsed already, where ``warningsField`` says: none when it
        /// names nothing there, or something that is neither a string nor strings.
        package func warnings(in tape: JSONTape) -> [String] {
            guard let warningsField, tape.tokens[0].kind == .object else { return [] }
            var index = 0
            for name in warningsField.split(separator: ".") {
                guard tape.tokens[index].kind == .object, let member = tape.member(String(name), of: index) else { return [] }
                index = member
            }
            switch tape.tokens[index].kind {
            case .string:
                return tape.text(at: index).map { [$0] } ?? []
            case .array:
                var warnings: [String] = []
                var element = index + 1
                for _ in 0..<Int(tape.tokens[index].count) {
                    if tape.tokens[element].kind == .string, let text = tape.text(at: element) { warnings.append(text) }
                    element = Int(tape.tokens[element].next)
                }
                return warnings
            default:
                return []
            }
        }

        /// The veto for a body parsed already (the caller checked the status).
        func veto(in tape: JSONTape) -> ServiceVeto? {
            guard tape.tokens[0].kind == .object, let index = tape.member(field, of: 0) else { return nil }
            let token = tape.tokens[index].kind
            let code: String
            switch success {
            case .codes(let codes):
                switch token {
                case .true:
                    if codes.contains("true") || codes.contains("1") { return nil }
                    code = "true"
                case .false:
                    if codes.contains("false") || codes.contains("0") { return nil }
                    code = "false"
                default:
                    guard let text = tape.text(at: index), !codes.contains(text) else { return nil }
                    code = text
                }
            case .flag:
                let flag: Bool
                switch token {
                case .true: flag = true
                case .false: flag = false
                case .string where tape.text(at: index) == "true": flag = true
                case .string where tape.text(at: index) == "false": flag = false
                default: return nil
                }
                if flag { return nil }
                code = errorField.flatMap { tape.member($0, of: 0) }.flatMap { tape.text(at: $0) } ?? "false"
            }
            let message = messageField.flatMap { tape.member($0, of: 0) }.flatMap { tape.text(at: $0) }
            return ServiceVeto(code: code, message: message ?? (success == .flag ? code : "no message"))
        }
    }
}
