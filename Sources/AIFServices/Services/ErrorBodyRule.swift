package import Foundation

/// What a service's error bodies say, for the errors of its failed loads: the members that hold
/// the server's message and code (`{"message": "Validation Failed", "code": "invalid"}`), and a
/// type to decode the whole body into, which the error hands over (`APIError.errorBody(as:)`).
///
/// ```swift
/// struct GitHubError: Decodable, Sendable { var message: String; var errors: [FieldError]? }
/// var errorBody: ErrorBodyRule { ErrorBodyRule(type: GitHubError.self) }
/// ```
///
/// Without a rule of its own, a service reads the members most APIs use (``common``).
public struct ErrorBodyRule: Sendable {
    /// The members that may hold the message, the first present as text wins; a dotted path
    /// reaches into objects (`error.message`).
    public var messageFields: [String]
    /// The member that holds the code (text or a number), if one does.
    public var codeField: String?
    /// The type the body is decoded into, or `nil` for none.
    public var type: (any (Decodable & Sendable).Type)?

    /// Creates a rule.
    ///
    /// - Parameters:
    ///   - messageFields: Where the message may be; those of ``common`` by default.
    ///   - codeField: Where the code is; `code` by default.
    ///   - type: The type the body is decoded into; none by default.
    public init(messageFields: [String] = ErrorBodyRule.commonMessageFields, codeField: String? = "code", type: (any (Decodable & Sendable).Type)? = nil) {
        self.messageFields = messageFields
        self.codeField = codeField
        self.type = type
    }

    /// The members most APIs put their message in: `message` (GitHub, most REST APIs),
    /// `error_description` (OAuth 2), `error.message` (Google), `detail` (RFC 9457 problem
    /// details), `title`, and `error` when it is text.
    public static let commonMessageFields = ["message", "error_description", "error.message", "detail", "title", "error"]

    /// ``commonMessageFields``, the code in `code`, no type.
    public static let common = ErrorBodyRule()

    /// What an error body said: its message and code when the rule found them, and the body
    /// decoded into the rule's type (or `type`, which wins) when it decodes.
    package struct Reading: Sendable {
        package var message: String?
        package var code: String?
        package var decoded: (any Sendable)?

        package init(message: String? = nil, code: String? = nil, decoded: (any Sendable)? = nil) {
            self.message = message
            self.code = code
            self.decoded = decoded
        }
    }

    /// Reads `body` — a JSON object, or nothing is found — with `decoder`.
    package func read(_ body: Data, as type: (any (Decodable & Sendable).Type)? = nil, decoder: any ContentDecoder) -> Reading {
        var reading = Reading()
        guard body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") else { return reading }
        if let type = type ?? self.type {
            reading.decoded = Self.decode(type, body, decoder)
        }
        guard case .object(let members)? = try? FastJSONDecoder().decode(JSONValue.self, from: body) else { return reading }
        for field in messageFields {
            if case .string(let text)? = Self.member(field, in: members), !text.isEmpty {
                reading.message = text
                break
            }
        }
        if let codeField, let code = Self.member(codeField, in: members)?.parameterText, !code.isEmpty {
            reading.code = code
        }
        return reading
    }

    /// `body` decoded into `type`, else into the rule's own ``type``; `nil` when neither is
    /// given or the body does not decode. (An envelope's refusal: its code and message are
    /// the application error rule's, so only the type is read.)
    package func decoded(_ body: Data, as type: (any (Decodable & Sendable).Type)? = nil, decoder: any ContentDecoder) -> (any Sendable)? {
        guard let type = type ?? self.type else { return nil }
        return Self.decode(type, body, decoder)
    }

    /// The code in `body` (a JSON object) where the rule reads it, or `nil`: what the error
    /// policies look up for a failed status.
    package func code(in body: Data) -> String? {
        guard let codeField, body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{"),
            case .object(let members)? = try? FastJSONDecoder().decode(JSONValue.self, from: body),
            let code = Self.member(codeField, in: members)?.parameterText, !code.isEmpty
        else { return nil }
        return code
    }

    private static func decode<Body: Decodable & Sendable>(_ type: Body.Type, _ body: Data, _ decoder: any ContentDecoder) -> (any Sendable)? {
        try? decoder.decode(type, from: body)
    }

    /// The member at a dotted path.
    private static func member(_ path: String, in members: [String: JSONValue]) -> JSONValue? {
        var names = path.split(separator: ".").map(String.init)
        guard let first = names.first else { return nil }
        names.removeFirst()
        var value = members[first]
        for name in names {
            guard case .object(let inner)? = value else { return nil }
            value = inner[name]
        }
        return value
    }
}
