import Foundation

/// RFC 3986 percent-encoding as the signature schemes define it: `A-Z a-z 0-9 - . _ ~` stay,
/// every other byte of the UTF-8 form becomes `%XX` with upper-case hex (a space is `%20`).
enum PercentEncoding {
    static func encode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output = [UInt8]()
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `%XX` escapes; a `+` stays a `+` (query strings built by this library encode a
    /// space as `%20`).
    static func decode(_ text: Substring) -> String {
        text.removingPercentEncoding ?? String(text)
    }

    /// The query of `url` as decoded name/value pairs, in order.
    static func queryItems(of url: URL) -> [(name: String, value: String)] {
        guard let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// `url` with its query replaced by `items`, each encoded strictly.
    static func url(_ url: URL, replacingQueryWith items: [(name: String, value: String)]) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.percentEncodedQuery = items.isEmpty ? nil : items.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
        return components.url ?? url
    }
}
