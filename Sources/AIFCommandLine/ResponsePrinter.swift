// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import Foundation

/// Prints a response on standard output as a person reads it: JSON indented in the order it
/// came (coloured on a terminal), other text as it is, a binary body only when it is not going
/// to a terminal — always ending with a newline; `--raw` writes the body's bytes untouched.
struct ResponsePrinter {
    /// Whether the body is written as it came.
    var raw: Bool
    /// Whether the status line and headers come first.
    var includesHead: Bool
    /// Whether standard output is a terminal (colours, no binary).
    var toTerminal = isatty(STDOUT_FILENO) == 1
    /// Whether colours are used: on a terminal, unless `NO_COLOR` is set.
    var colours: Bool { toTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil }

    /// Writes a response.
    func print(version: HTTPResponse.Version, status: Int, headers: HTTPHeaders, body: Data) {
        var output = Data()
        if includesHead {
            output.append(contentsOf: "\(version) \(status)\(Self.reason(status).map { " " + $0 } ?? "")\n".utf8)
            for field in headers { output.append(contentsOf: "\(field.name): \(field.value)\n".utf8) }
            if !body.isEmpty { output.append(contentsOf: "\n".utf8) }
        }
        output.append(self.body(body))
        FileHandle.standardOutput.write(output)
    }

    /// The body as it is to be printed.
    func body(_ body: Data) -> Data {
        if raw || body.isEmpty { return body }
        if (try? JSONSerialization.jsonObject(with: body, options: .fragmentsAllowed)) != nil {
            return Data((JSONIndenter(colours: colours).indent(Array(body)) + "\n").utf8)
        }
        guard let text = String(data: body, encoding: .utf8) else {
            return toTerminal ? Data("<\(body.count) bytes of binary data: send them to a file, or add --raw>\n".utf8) : body
        }
        return Data((text.hasSuffix("\n") ? text : text + "\n").utf8)
    }

    /// The reason phrase of common statuses.
    static func reason(_ status: Int) -> String? {
        [200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 206: "Partial Content", 301: "Moved Permanently", 302: "Found",
         303: "See Other", 304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request",
         401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 409: "Conflict", 410: "Gone",
         412: "Precondition Failed", 413: "Content Too Large", 415: "Unsupported Media Type", 422: "Unprocessable Content",
         429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
         504: "Gateway Timeout"][status]
    }
}

/// Re-indents valid JSON two spaces a level, keeping its members in their order, with ANSI
/// colours for keys, strings, numbers and literals when asked.
struct JSONIndenter {
    var colours: Bool

    private static let key = "\u{1B}[34m", string = "\u{1B}[32m", number = "\u{1B}[36m", literal = "\u{1B}[35m", reset = "\u{1B}[0m"

    func indent(_ bytes: [UInt8]) -> String {
        var output = ""
        var depth = 0
        var index = 0
        func newline() { output += "\n" + String(repeating: "  ", count: depth) }
        func nextSignificant(after position: Int) -> UInt8? {
            var position = position
            while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
            return position < bytes.count ? bytes[position] : nil
        }
        func painted(_ text: String, _ colour: String) -> String { colours ? colour + text + Self.reset : text }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
                let text = String(decoding: bytes[index...min(end, bytes.count - 1)], as: UTF8.self)
                output += painted(text, nextSignificant(after: end + 1) == UInt8(ascii: ":") ? Self.key : Self.string)
                index = end + 1
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let closing = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                output.unicodeScalars.append(Unicode.Scalar(byte))
                if nextSignificant(after: index + 1) == closing {
                    output.unicodeScalars.append(Unicode.Scalar(closing))
                    index += 1
                    while bytes[index] != closing { index += 1 }
                } else {
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline()
                output.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: ","):
                output += ","
                newline()
            case UInt8(ascii: ":"):
                output += ": "
            case 0x20, 0x0A, 0x0D, 0x09:
                break
            default:
                var end = index
                while end < bytes.count, !",}] \n\r\t".utf8.contains(bytes[end]) { end += 1 }
                let text = String(decoding: bytes[index..<end], as: UTF8.self)
                output += painted(text, byte == UInt8(ascii: "t") || byte == UInt8(ascii: "f") || byte == UInt8(ascii: "n") ? Self.literal : Self.number)
                index = end
                continue
            }
            index += 1
        }
        return output
    }
}
#endif
