package import Foundation

/// Where a request goes: a parsed `URL`, or text the library wrote itself and knows to be a
/// valid absolute `http(s)` URL, parsed only if someone reads ``url``.
///
/// The request generator's signed URLs are the second kind. libcurl takes text, so a `URL`
/// parsed from each one (as much work as signing it) would mostly be thrown away unread.
package enum URLLocation: Sendable {
    /// A URL as given.
    case parsed(URL)
    /// Text checked when it was written (an `http(s)` scheme and host from a parsed URL, then
    /// only characters a URL parser keeps as they are); see `RequestGenerator`.
    case text(String)

    /// The URL, parsed now when held as text.
    package var url: URL {
        switch self {
        case .parsed(let url):
            return url
        case .text(let text):
            // Cannot fail for text that passed the writer's checks; a failure is a bug in them.
            guard let url = URL(string: text) else { preconditionFailure("a URL written by the request generator does not parse") }
            return url
        }
    }

    /// The URL's text, as libcurl is given it.
    package var text: String {
        switch self {
        case .parsed(let url): url.absoluteString
        case .text(let text): text
        }
    }
}
