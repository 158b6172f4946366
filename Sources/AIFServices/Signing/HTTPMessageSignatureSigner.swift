import Foundation

/// RFC 9421 HTTP Message Signatures with `hmac-sha256`.
///
/// Adds `Signature-Input` and `Signature` headers. By default the signature covers `@method`,
/// `@authority`, `@path`, `@query` (when the URL has one), `content-type` (when set) and
/// `content-digest` — an RFC 9530 `sha-256` digest of the body, added for requests with a body —
/// with the parameters `created`, `nonce`, `keyid` (the public key) and `alg="hmac-sha256"`.
/// Components and parameters can be chosen explicitly, which is how the RFC's own example
/// (Appendix B.2.5) is reproduced in the tests.
public struct HTTPMessageSignatureSigner: RequestSigner {
    /// A covered component.
    public enum Component: Sendable, Hashable {
        /// `@method`.
        case method
        /// `@authority`: host, and port when not the scheme's default, in lower case.
        case authority
        /// `@path`, percent-encoded as sent.
        case path
        /// `@query`: `?` and the query as sent.
        case query
        /// A header field, by name (compared without regard to case).
        case header(String)

        /// The component identifier as it appears in the signature base.
        var identifier: String {
            switch self {
            case .method: "@method"
            case .authority: "@authority"
            case .path: "@path"
            case .query: "@query"
            case .header(let name): name.lowercased()
            }
        }
    }

    /// The signature label, `sig1` by default.
    public var label: String
    /// The covered components, or `nil` for the default set.
    public var components: [Component]?
    /// Whether the `nonce` parameter is included.
    public var includesNonce: Bool
    /// Whether the `alg="hmac-sha256"` parameter is included.
    public var includesAlgorithm: Bool

    /// Creates the signer.
    ///
    /// - Parameters:
    ///   - label: The signature label.
    ///   - components: The covered components; `nil` for the default set.
    ///   - includesNonce: Whether to include `nonce`; yes by default.
    ///   - includesAlgorithm: Whether to include `alg`; yes by default.
    public init(label: String = "sig1", components: [Component]? = nil, includesNonce: Bool = true, includesAlgorithm: Bool = true) {
        self.label = label
        self.components = components
        self.includesNonce = includesNonce
        self.includesAlgorithm = includesAlgorithm
    }

    /// `RFC 9421 HTTP Message Signatures, hmac-sha256`.
    public var schemeDescription: String { "RFC 9421 HTTP Message Signatures, hmac-sha256" }

    /// Signs `request`, adding `Content-Digest` (when covered), `Signature-Input` and
    /// `Signature`.
    public func sign(_ request: HTTPRequest, credentials: SigningContext.Credentials, context: SigningContext) throws(SigningError) -> HTTPRequest {
        var signed = request
        let hasBody: Bool
        switch request.body {
        case .empty: hasBody = false
        case .bytes(let data): hasBody = !data.isEmpty
        case .file, .multipart, .stream: hasBody = true
        }
        let hasQuery = !(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? "").isEmpty
        var covered = components ?? {
            var list: [Component] = [.method, .authority, .path]
            if hasQuery { list.append(.query) }
            if request.headers.contains("Content-Type") { list.append(.header("content-type")) }
            if hasBody { list.append(.header("content-digest")) }
            return list
        }()
        if covered.contains(.header("content-digest")) {
            let digest = Data(try request.body.sha256(url: request.url)).base64EncodedString()
            signed.headers.set(name: "Content-Digest", value: "sha-256=:\(digest):")
        }
        covered = covered.map { component in
            if case .header(let name) = component { return .header(name.lowercased()) }
            return component
        }

        let parameters = signatureParameters(covered, credentials: credentials, context: context)
        let base = try signatureBase(for: signed, covering: covered, parameters: parameters)
        let signature = Data(Digest.hmac(Array(base.utf8), key: credentials.privateKey.bytes)).base64EncodedString()
        signed.headers.set(name: "Signature-Input", value: "\(label)=\(parameters)")
        signed.headers.set(name: "Signature", value: "\(label)=:\(signature):")
        return signed
    }

    /// The `@signature-params` value: the covered identifiers, then the parameters.
    func signatureParameters(_ covered: [Component], credentials: SigningContext.Credentials, context: SigningContext) -> String {
        var text = "(" + covered.map { "\"\($0.identifier)\"" }.joined(separator: " ") + ")"
        text += ";created=\(context.unixSeconds)"
        if includesNonce { text += ";nonce=\"\(context.nonce)\"" }
        text += ";keyid=\"\(credentials.publicKey)\""
        if includesAlgorithm { text += ";alg=\"hmac-sha256\"" }
        return text
    }

    /// The signature base: one `"identifier": value` line per component, then
    /// `"@signature-params"`, joined by `\n`.
    func signatureBase(for request: HTTPRequest, covering covered: [Component], parameters: String) throws(SigningError) -> String {
        var lines: [String] = []
        for component in covered {
            lines.append("\"\(component.identifier)\": \(try value(of: component, in: request))")
        }
        lines.append("\"@signature-params\": \(parameters)")
        return lines.joined(separator: "\n")
    }

    private func value(of component: Component, in request: HTTPRequest) throws(SigningError) -> String {
        let url = request.url
        switch component {
        case .method:
            return request.method.rawValue.uppercased()
        case .authority:
            let host = (url.host(percentEncoded: true) ?? "").lowercased()
            let scheme = url.scheme?.lowercased()
            if let port = url.port, !(scheme == "https" && port == 443), !(scheme == "http" && port == 80) {
                return "\(host):\(port)"
            }
            return host
        case .path:
            let path = url.path(percentEncoded: true)
            return path.isEmpty ? "/" : path
        case .query:
            return "?" + (URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? "")
        case .header(let name):
            let values = request.headers.values(for: name)
            guard !values.isEmpty else {
                throw SigningError("the signature covers the header \(name), which the request does not have", url: url.absoluteString)
            }
            return values.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        }
    }
}
