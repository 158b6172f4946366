package import Foundation
@_spi(CrossModule) import AIFTransport

extension HTTPHeaders {
    /// Names (in lower case) of headers whose values are credentials.
    static let credentialNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    /// Names (in lower case) of headers whose values are credentials or signatures.
    static let secretNames: Set<String> = credentialNames.union(["x-api-key", "x-signature", "signature"])

    /// The headers with credential values (`Authorization`, `Cookie`, signatures …) replaced by
    /// `***`, for logs and displays.
    public func redactingSecrets() -> HTTPHeaders {
        redacting(Self.secretNames)
    }

    /// The headers with the values of these (lower-case) names replaced by `***`.
    func redacting(_ names: Set<String>) -> HTTPHeaders {
        HTTPHeaders(fields.map { names.contains($0.name.lowercased()) ? Field(name: $0.name, value: "***") : $0 })
    }
}

extension HTTPRequest {
    /// An equivalent `curl` command line, to reproduce the request from a shell.
    ///
    /// - Parameters:
    ///   - revealingSecrets: Whether to show everything as it is; by default credential headers
    ///     (`Authorization`, `Cookie` …), URL passwords, secret parameters and — unless
    ///     `showingSignature` — the signature read `***`.
    ///   - showingSignature: Whether the signature's fields (`sign`, `X-Signature`, `Signature` …)
    ///     are shown, so that the command is accepted as it stands while it is fresh; no by
    ///     default. They name no private key, which no request ever holds.
    ///   - environment: Environment variables (the process's, say) whose values may appear in
    ///     hidden headers: a hidden value that holds one is written as a reference to it —
    ///     `-H "Authorization: Bearer ${SHOP_TOKEN}"` — so that the command works in a shell
    ///     where it is set, with nothing secret on the screen. Values shorter than 8 characters
    ///     are not looked for. None by default.
    /// - Returns: The command, one option per line.
    public func curlCommand(revealingSecrets: Bool = false, showingSignature: Bool = false, referringTo environment: [String: String] = [:]) -> String {
        func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        var parts = ["curl"]
        if method == .head {
            parts.append("--head")
        } else if method != .get || body.byteCount != 0 {
            parts.append("-X \(method.rawValue)")
        }
        let hidden = revealingSecrets ? [] : showingSignature ? HTTPHeaders.credentialNames : HTTPHeaders.secretNames
        let references = Self.shellReferences(environment)
        for field in headers {
            if !hidden.contains(field.name.lowercased()) {
                parts.append("-H " + quote("\(field.name): \(field.value)"))
            } else if let referring = Self.shellWords("\(field.name): \(field.value)", referringTo: references) {
                parts.append("-H " + referring)
            } else {
                parts.append("-H " + quote("\(field.name): ***"))
            }
        }
        if let connection {
            parts += Self.curlConnectionOptions(connection, revealingSecrets: revealingSecrets, quote: quote)
        }
        switch body {
        case .empty: break
        case .bytes(let data):
            if let text = String(data: data, encoding: .utf8).map({ revealingSecrets ? $0 : HTTPRequest.redactedBody($0) }) {
                parts.append("--data-binary " + quote(text))
            } else {
                parts.append("--data-binary '<\(data.count) bytes>'")
            }
        case .file(let path): parts.append("--data-binary " + quote("@" + path))
        case .multipart(let form): parts += form.parts.map { "-F " + quote(Self.curlFormArgument($0, revealingSecrets: revealingSecrets)) }
        case .stream(let stream):
            // Produced as it is sent: curl reads it from its standard input.
            if stream.length == nil { parts.append("-H 'Transfer-Encoding: chunked'") }
            parts.append("--data-binary @-")
        }
        let urlText = revealingSecrets ? url.absoluteString : HTTPRequest.redactedURL(url, keepingSignature: showingSignature)
        parts.append(quote(urlText))
        return parts.joined(separator: " \\\n  ")
    }
}

extension HTTPRequest {
    /// `--unix-socket`, `--connect-to`, `--cacert`, `--pinnedpubkey`, `--cert`, `--key` and
    /// `--pass` for a request's own connection settings. PEM held in memory has no file to
    /// name: it is written as a placeholder, and the passphrase as `***` unless secrets are
    /// revealed.
    static func curlConnectionOptions(_ connection: Connection, revealingSecrets: Bool, quote: (String) -> String) -> [String] {
        var parts: [String] = []
        if let path = connection.unixSocketPath { parts.append("--unix-socket " + quote(path)) }
        for override in connection.hostOverrides { parts.append("--connect-to " + quote(override.curlNotation)) }
        switch connection.certificateAuthorities {
        case .file(let path)?: parts.append("--cacert " + quote(path))
        case .pem(let data)?: parts.append("--cacert '<\(data.count) bytes of PEM held in memory>'")
        case nil: break
        }
        if !connection.pinnedPublicKeys.isEmpty {
            parts.append("--pinnedpubkey " + quote(connection.pinnedPublicKeys.map { "sha256//" + $0.sha256Base64 }.joined(separator: ";")))
        }
        guard let identity = connection.clientCertificate else { return parts }
        func file(_ source: ClientCertificate.Source) -> String {
            switch source {
            case .file(let path): quote(path)
            case .pem(let data): "'<\(data.count) bytes of PEM held in memory>'"
            }
        }
        parts.append("--cert " + file(identity.certificate))
        if let key = identity.privateKey { parts.append("--key " + file(key)) }
        if let passphrase = identity.passphrase {
            parts.append("--pass " + (revealingSecrets ? quote(String(decoding: passphrase.bytes, as: UTF8.self)) : "'***'"))
        }
        return parts
    }

    /// The variables of `environment` worth looking for in a secret, longest value first: a
    /// name a shell can expand, a value of at least 8 characters.
    static func shellReferences(_ environment: [String: String]) -> [(name: String, value: String)] {
        func isShellName(_ name: String) -> Bool {
            guard let first = name.utf8.first, first == UInt8(ascii: "_") || (first | 0x20) >= UInt8(ascii: "a") && (first | 0x20) <= UInt8(ascii: "z") else { return false }
            return name.utf8.allSatisfy { $0 == UInt8(ascii: "_") || ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") || $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        }
        return environment.filter { isShellName($0.key) && $0.value.count >= 8 }
            .map { (name: $0.key, value: $0.value) }
            .sorted { ($0.value.count, $1.name) > ($1.value.count, $0.name) }
    }

    /// `text` as one double-quoted shell word in which each occurrence of a reference's value
    /// is `${NAME}`, or `nil` when no value occurs in it.
    static func shellWords(_ text: String, referringTo references: [(name: String, value: String)]) -> String? {
        var pieces: [(text: Substring, isReference: Bool)] = [(text[...], false)]
        for (name, value) in references {
            pieces = pieces.flatMap { piece -> [(text: Substring, isReference: Bool)] in
                guard !piece.isReference, piece.text.contains(value) else { return [piece] }
                var split: [(text: Substring, isReference: Bool)] = []
                var rest = piece.text
                while let range = rest.range(of: value) {
                    split.append((rest[..<range.lowerBound], false))
                    split.append((Substring(name), true))
                    rest = rest[range.upperBound...]
                }
                split.append((rest, false))
                return split
            }
        }
        guard pieces.contains(where: \.isReference) else { return nil }
        // What is left must not look like a secret itself (the part of a token no variable
        // holds): a scheme (`Bearer`) and separators, not a long run of token characters.
        let tokenCharacters = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "+/=._~-"))
        for (index, piece) in pieces.enumerated() where !piece.isReference {
            let left = index == 0 ? piece.text.drop { $0 != ":" } : piece.text   // not the header's name
            if left.components(separatedBy: tokenCharacters.inverted).contains(where: { $0.count >= 12 }) { return nil }
        }
        var word = "\""
        for piece in pieces {
            if piece.isReference {
                word += "${\(piece.text)}"
            } else {
                for character in piece.text {
                    if "\\\"$`".contains(character) { word.append("\\") }
                    word.append(character)
                }
            }
        }
        return word + "\""
    }

    /// A part as curl's `-F` takes it: `name=value`, `name=@path`, or `name=<bytes>` for bytes
    /// that are not text, with `;filename=` and `;type=` as given. The values of secret
    /// parameters read `***` unless `revealingSecrets`.
    static func curlFormArgument(_ part: HTTPRequest.MultipartForm.Part, revealingSecrets: Bool) -> String {
        func parameter(_ value: String) -> String { "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        var argument = part.name + "="
        switch part.content {
        case .file(let path):
            argument += "@" + parameter(path)
        case .bytes(let data):
            if let text = String(data: data, encoding: .utf8), !text.hasPrefix("@"), !text.hasPrefix("<"), !text.contains(";") {
                argument += !revealingSecrets && secretParameters.withLock({ $0.contains(part.name) }) ? "***" : text
            } else {
                argument += "<\(data.count) bytes>"
            }
        }
        if let filename = part.filename { argument += ";filename=" + parameter(filename) }
        if let type = part.contentType { argument += ";type=" + type }
        return argument
    }

    /// The URL for logs and displays: the password, an AIF-HMAC `sign` value (unless
    /// `keepingSignature`) and the secret parameters read `***`.
    package static func redactedURL(_ url: URL, keepingSignature: Bool = false) -> String {
        var text = TransportError.redactingPassword(in: url.absoluteString)
        for name in (keepingSignature ? [] : ["sign"]) + secretParameters.withLock({ $0 }).sorted() where text.contains("\(name)=") {
            text = text.replacing(try! Regex("([?&]\(NSRegularExpression.escapedPattern(for: name))=)[^&#]*")) { "\($0.output[1].substring ?? "")***" }
        }
        return text
    }

    /// A body for displays: the values of secret parameters read `***` (as JSON members and
    /// as form fields).
    static func redactedBody(_ text: String) -> String {
        var text = text
        for name in secretParameters.withLock({ $0 }).sorted() where text.contains(name) {
            let escaped = NSRegularExpression.escapedPattern(for: name)
            text = text.replacing(try! Regex("(\"\(escaped)\"\\s*:\\s*)\"(?:[^\"\\\\]|\\\\.)*\"")) { "\($0.output[1].substring ?? "")\"***\"" }
            text = text.replacing(try! Regex("((?:^|&)\(escaped)=)[^&]*")) { "\($0.output[1].substring ?? "")***" }
        }
        return text
    }

    /// Names of request parameters that carry credentials (an ``Authenticator``'s placement).
    private static let secretParameters = Locked(Set<String>())

    /// Whether a parameter name was marked as a credential's.
    package static func isSecretParameter(_ name: String) -> Bool {
        secretParameters.withLock { $0.contains(name) }
    }

    /// Marks a parameter name as a credential's, to be redacted wherever requests are shown.
    static func registerSecretParameter(_ name: String) {
        secretParameters.withLock { _ = $0.insert(name) }
    }
}
