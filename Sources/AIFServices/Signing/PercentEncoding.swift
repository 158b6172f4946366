import Foundation

/// RFC 3986 percent-encoding as the signature schemes define it: `A-Z a-z 0-9 - . _ ~` stay,
/// every other byte of the UTF-8 form becomes `%XX` with upper-case hex (a space is `%20`).
package enum PercentEncoding {
    package static func encode(_ text: String) -> String {
        var text = text
        let encoded: String? = text.withUTF8 { bytes in
            // Most names and values (keys, numbers, hex signatures) need no encoding at all.
            guard bytes.contains(where: { !isUnreserved($0) }) else { return nil }
            let hex: StaticString = "0123456789ABCDEF"
            var output = [UInt8]()
            output.reserveCapacity(bytes.count * 3)
            hex.withUTF8Buffer { hex in
                for byte in bytes {
                    if isUnreserved(byte) {
                        output.append(byte)
                    } else {
                        output.append(UInt8(ascii: "%"))
                        output.append(hex[Int(byte >> 4)])
                        output.append(hex[Int(byte & 0x0F)])
                    }
                }
            }
            return String(decoding: output, as: UTF8.self)
        }
        return encoded ?? text
    }

    @inline(__always) private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Decodes `%XX` escapes; a `+` stays a `+` (query strings built by this library encode a
    /// space as `%20`).
    static func decode(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        return text.removingPercentEncoding ?? String(text)
    }

    /// The query of `url` as decoded name/value pairs, in order.
    static func queryItems(of url: URL) -> [(name: String, value: String)] {
        guard let query = url.query(percentEncoded: true), !query.isEmpty else { return [] }
        return queryItems(of: query[...])
    }

    /// A query string (without `?`) as decoded name/value pairs, in order.
    static func queryItems(of query: Substring) -> [(name: String, value: String)] {
        guard !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return (decode(pair), "") }
            return (decode(pair[..<equals]), decode(pair[pair.index(after: equals)...]))
        }
    }

    /// `url` with its query replaced by `items`, each encoded strictly (the fragment is kept).
    static func url(_ url: URL, replacingQueryWith items: [(name: String, value: String)]) -> URL {
        let text = url.absoluteString.utf8
        let fragmentStart = text.firstIndex(of: UInt8(ascii: "#")) ?? text.endIndex
        let queryStart = text[..<fragmentStart].firstIndex(of: UInt8(ascii: "?")) ?? fragmentStart
        var result = [UInt8]()
        result.reserveCapacity(text.count + items.count * 32)
        result.append(contentsOf: text[..<queryStart])
        for (index, item) in items.enumerated() {
            result.append(index == 0 ? UInt8(ascii: "?") : UInt8(ascii: "&"))
            result.append(contentsOf: encode(item.name).utf8)
            result.append(UInt8(ascii: "="))
            result.append(contentsOf: encode(item.value).utf8)
        }
        result.append(contentsOf: text[fragmentStart...])
        return URL(string: String(decoding: result, as: UTF8.self)) ?? url
    }
}
