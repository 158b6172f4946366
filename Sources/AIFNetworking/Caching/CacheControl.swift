import Foundation

/// The directives of a response's `Cache-Control` header that a private client cache acts on
/// (RFC 9111, section 5.2.2). Unknown directives are ignored, as the RFC asks; a malformed
/// `max-age` counts as absent.
struct CacheControl: Equatable {
    /// `no-store`: not to be stored at all.
    var noStore = false
    /// `no-cache`: may be stored, but revalidated before each use.
    var noCache = false
    /// `private`: meant for one user's cache only.
    var isPrivate = false
    /// `max-age`, in seconds.
    var maxAge: Int?

    /// Reads the header (every `Cache-Control` field of the response, comma-separated lists).
    init(_ headers: HTTPHeaders) {
        for field in headers.values(for: "Cache-Control") {
            for directive in field.split(separator: ",") {
                // Empty pieces kept, so that `=5` or `=` has a name to read: an empty one, no directive.
                let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
                let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
                switch name {
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "private": isPrivate = true
                case "max-age": if let value, let seconds = Int(value), seconds >= 0 { maxAge = maxAge.map { min($0, seconds) } ?? seconds }
                default: continue
                }
            }
        }
    }
}
