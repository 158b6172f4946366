package import Foundation

extension HTTPRequest {
    /// The credentials this request carried, as text: the environment's keys, the values of its
    /// credential headers (and the token after `Bearer` or `Basic`), its `sign` and its secret
    /// parameters' values — each as it is, percent-encoded and in base64 (as a server that
    /// echoes a request may write them), longest first. Values shorter than 4 characters are
    /// left out, as too likely to occur by chance.
    ///
    /// - Parameters:
    ///   - environment: The environment the request was signed for.
    ///   - secretParameter: Whether a parameter's value is a secret; those marked as a
    ///     credential's by default.
    package func secretValues(in environment: ServiceEnvironment, secretParameter: (String) -> Bool = HTTPRequest.isSecretParameter) -> [String] {
        var values: [String] = []
        if let credentials = environment.credentials {
            values.append(credentials.publicKey)
            if let privateKey = String(validating: credentials.privateKey.bytes, as: UTF8.self) { values.append(privateKey) }
        }
        for field in headers where HTTPHeaders.secretNames.contains(field.name.lowercased()) {
            values.append(field.value)
            if let space = field.value.firstIndex(of: " ") { values.append(String(field.value[field.value.index(after: space)...])) }
        }
        for (name, found) in RequestParameters(self, path: [:]).values where name == "sign" || secretParameter(name) {
            values += found
        }
        var forms = Set<String>()
        for value in values where value.count >= 4 {
            forms.insert(value)
            if let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { forms.insert(encoded) }
            let base64 = Data(value.utf8).base64EncodedString()
            forms.insert(base64)
            // Unpadded, and as base64url (as JWTs write it).
            let unpadded = String(base64.prefix { $0 != "=" })
            forms.insert(unpadded)
            forms.insert(String(unpadded.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }))
        }
        return forms.filter { $0.count >= 4 }.sorted { $0.count > $1.count }
    }
}

/// The start of a body as text for an error message: at most `limit` characters, cut at a
/// character boundary and ended with `…` when there was more, every secret shown as `***`.
///
/// - Parameters:
///   - body: The body.
///   - limit: The most characters shown.
///   - secrets: Values never to show (``HTTPRequest/secretValues(in:secretParameter:)``).
/// - Returns: The preview; empty for an empty body.
package func bodyPreview(_ body: Data, limit: Int, hiding secrets: [String]) -> String {
    // Enough bytes for `limit` characters (an emoji sequence takes a dozen or more), and for a
    // secret that begins within them; a character cut by the byte count is dropped.
    var end = min(body.count, limit * 16 + (secrets.first?.utf8.count ?? 0))
    let cut = end < body.count
    // Back to the start of a scalar, so that only the last character can be incomplete.
    while cut, end > 0, body[body.startIndex + end] & 0b1100_0000 == 0b1000_0000 { end -= 1 }
    var text = String(decoding: body.prefix(end), as: UTF8.self)
    if cut, !text.isEmpty { text.removeLast() }
    for secret in secrets where text.contains(secret) {
        text = text.replacingOccurrences(of: secret, with: "***")
    }
    guard cut || text.count > limit else { return text }
    return String(text.prefix(limit)) + "…"
}
