import Foundation

/// The parts of building a request — its placeholders filled, its URL, its query and form
/// encodings, its signature — that ``ServiceRegistry/ResolvedService/makeRequest(path:method:parameters:headers:bodyEncoding:arrays:query:rawBody:rawBodyContentType:placements:credential:signingContext:)``
/// puts together, and a redirect's re-signing and a body's encoding use on their own.
package struct RequestGenerator: Sendable {
    /// Creates a generator.
    package init() {}

    /// A parameter as a header's value: a scalar as text, a list as its elements joined by commas
    /// (OpenAPI's `simple` style); `nil` for null.
    static func headerText(of value: JSONValue, parameter: String, service: ServiceName, path: String) throws(ServiceError) -> String? {
        let text: String
        switch value {
        case .null: return nil
        case .object:
            throw ServiceError.unencodableParameters(service: service, path: path, reason: "the parameter \(parameter) goes in a header, which holds text or a list, and it is a dictionary")
        case .array(let elements):
            var texts: [String] = []
            for element in elements {
                guard !element.isStructured else {
                    throw ServiceError.unencodableParameters(service: service, path: path, reason: "the parameter \(parameter) goes in a header, which holds text or a list, and it is a list of lists or dictionaries")
                }
                if let text = element.textValue { texts.append(text) }
            }
            text = texts.joined(separator: ",")
        default: text = value.textValue ?? ""
        }
        guard !text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
            throw ServiceError.unencodableParameters(service: service, path: path, reason: "the parameter \(parameter) goes in a header, and its value holds a line break")
        }
        return text
    }

    /// Why a file `body` is read from cannot be read, if one cannot: checked before anything
    /// is signed or sent, so that a missing file is the same error whether the service signs
    /// the body (which reads it) or not (the transport would find out when it opens it).
    static func unreadableFile(in body: HTTPRequest.Body) -> String? {
        var files: [(what: String, path: String)] = []
        switch body {
        case .file(let path): files = [("request body file", path)]
        case .multipart(let form):
            for (index, part) in form.parts.enumerated() {
                if case .file(let path) = part.content { files.append(("the file of multipart part \(index + 1) (\(part.name.debugDescription))", path)) }
            }
        case .empty, .bytes, .stream: return nil
        }
        for (what, path) in files {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return "cannot open \(what) \(path): \(String(cString: strerror(errno)))" }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return "\(what) \(path) is not a regular file" }
        }
        return nil
    }

    /// Signs with the service's signer and the environment's keys (unchanged when either is
    /// missing); AIF-HMAC covers all parameters or only its own fields, as the environment says.
    func sign(_ request: HTTPRequest, for resolved: ServiceRegistry.ResolvedService, context: SigningContext) throws(ServiceError) -> HTTPRequest {
        guard let credentials = resolved.environment.credentials,
            let signer = resolved.service.signer?.covering(allParameters: resolved.environment.signsAllParameters)
        else { return request }
        do {
            return try signer.sign(request, credentials: credentials, context: context)
        } catch {
            throw ServiceError.signingFailed(service: resolved.service.name, error)
        }
    }

    /// Replaces `{name}` with the parameter `name`, percent-encoded, and removes it from the
    /// parameters.
    func fillPlaceholders(in path: String, from parameters: inout Parameters, service: ServiceName) throws(ServiceError) -> String {
        guard path.utf8.contains(UInt8(ascii: "{")) else { return path }
        var result = ""
        var rest = path[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            // A list of scalars is its elements joined by commas (OpenAPI's `simple` style).
            switch parameters[name] {
            case .array(let elements) where elements.allSatisfy({ $0.textValue != nil }):
                result += elements.compactMap(\.textValue).map(PercentEncoding.encode).joined(separator: ",")
            case let value?:
                guard let text = value.textValue else {
                    if case .null = value { throw ServiceError.missingPathParameter(name, service: service, path: path) }
                    throw ServiceError.unencodableParameters(
                        service: service, path: path, reason: "the parameter \(name) fills {\(name)} in the path, which holds text or a list of text, and it is a dictionary or a list of lists")
                }
                result += PercentEncoding.encode(text)
            case nil:
                throw ServiceError.missingPathParameter(name, service: service, path: path)
            }
            parameters[name] = nil
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// A request URL written by the generator: the text, and where its path and query are.
    struct URLText {
        /// The whole URL.
        var whole: String
        /// Up to the end of the path.
        var prefix: Substring
        /// The path (empty for none).
        var path: Substring
        /// The query, without `?` (empty for none).
        var query: Substring
    }

    /// A request URL, parsed or still text.
    enum Target {
        /// A service's own URL, a full URL given as the path, or text that had to be
        /// parsed to be sure of it.
        case url(URL)
        /// The standard rule's URL, which a parser would keep exactly as written.
        case text(URLText)
    }

    /// The request URL (see ``Target``): text is parsed only when it cannot be signed as text.
    func makeURL(path: String, originalMethodName: String, resolved: ServiceRegistry.ResolvedService) throws(ServiceError) -> Target {
        let name = resolved.service.name
        if let custom = resolved.service.url(for: path, in: resolved.environment) { return .url(custom) }
        if Self.hasHTTPScheme(path) {
            guard let url = URL(string: path) else {
                throw ServiceError.invalidURL(service: name, path: originalMethodName, reason: "\"\(path)\" is not a valid URL")
            }
            return .url(url)
        }
        // Written byte by byte into one string: the base without trailing slashes, then the
        // version and the path each trimmed of slashes and joined with one, then the query.
        var base = resolved.environment.baseURL.absoluteString
        var version = resolved.environment.apiVersion
        var methodPath = path
        var layout = Layout()
        let text = base.withUTF8 { base in
            version.withUTF8 { version in
                methodPath.withUTF8 { methodPath in
                    Self.joinURL(base: base, version: version, methodPath: methodPath, layout: &layout)
                }
            }
        }
        let utf8 = text.utf8
        let pathStart = utf8.index(utf8.startIndex, offsetBy: layout.pathStart)
        let prefixEnd = utf8.index(utf8.startIndex, offsetBy: layout.prefixEnd)
        let queryStart = utf8.index(utf8.startIndex, offsetBy: layout.queryStart)
        let urlText = URLText(whole: text, prefix: text[..<prefixEnd], path: text[pathStart..<prefixEnd], query: text[queryStart...])
        // Text that a URL parser would take as it stands: an absolute http(s) URL (the base
        // comes from a parsed URL) whose path and query hold only what is allowed unencoded (no
        // fragment, no spaces). Anything else is parsed now.
        guard layout.baseIsPlain, Self.hasHTTPScheme(urlText.prefix), Self.isPlainURLText(urlText.path), Self.isPlainURLText(urlText.query) else {
            return .url(try parsedURL(text, path: originalMethodName, service: name))
        }
        return .text(urlText)
    }

    /// Where ``joinURL(base:version:methodPath:layout:)`` put the parts, as UTF-8 offsets.
    private struct Layout {
        /// Where the path begins (after `scheme://authority`).
        var pathStart = 0
        /// Where the path ends (a `?` or the end).
        var prefixEnd = 0
        /// Where the query begins (after the `?`, or the end when there is none).
        var queryStart = 0
        /// Whether the base held no `?` or `#`.
        var baseIsPlain = true
    }

    /// The request URL's text: `base` without trailing slashes, then `version` and the path of
    /// `methodPath` each without leading and trailing slashes and after one `/` (when not
    /// empty), then `?` and the query of `methodPath` (when not empty).
    private static func joinURL(
        base: UnsafeBufferPointer<UInt8>, version: UnsafeBufferPointer<UInt8>, methodPath: UnsafeBufferPointer<UInt8>, layout: inout Layout
    ) -> String {
        let slash = UInt8(ascii: "/")
        var baseEnd = base.count
        while baseEnd > 0, base[baseEnd - 1] == slash { baseEnd -= 1 }
        var slashes = 0
        layout.pathStart = baseEnd
        for offset in 0..<baseEnd {
            let byte = base[offset]
            if byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { layout.baseIsPlain = false }
            if byte == slash {
                slashes += 1
                if slashes == 3 { layout.pathStart = min(layout.pathStart, offset) }
            }
        }
        let questionMark = methodPath.firstIndex(of: UInt8(ascii: "?"))
        /// The bounds of `bytes[range]` without leading and trailing slashes.
        func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
            var lower = range.lowerBound
            var upper = range.upperBound
            while lower < upper, bytes[lower] == slash { lower += 1 }
            while upper > lower, bytes[upper - 1] == slash { upper -= 1 }
            return lower..<upper
        }
        let versionRange = trimmed(version, 0..<version.count)
        let pathRange = trimmed(methodPath, 0..<(questionMark ?? methodPath.count))
        let queryRange = (questionMark.map { $0 + 1 } ?? methodPath.count)..<methodPath.count
        let capacity = baseEnd + versionRange.count + pathRange.count + queryRange.count + 3
        var prefixEnd = 0
        let text = String(unsafeUninitializedCapacity: capacity) { output in
            var count = 0
            func append(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
                for offset in range {
                    output[count] = bytes[offset]
                    count += 1
                }
            }
            func appendSegment(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
                guard !range.isEmpty else { return }
                output[count] = slash
                count += 1
                append(bytes, range)
            }
            append(base, 0..<baseEnd)
            appendSegment(version, versionRange)
            appendSegment(methodPath, pathRange)
            prefixEnd = count
            if !queryRange.isEmpty {
                output[count] = UInt8(ascii: "?")
                count += 1
                append(methodPath, queryRange)
            }
            return count
        }
        layout.prefixEnd = prefixEnd
        layout.queryStart = queryRange.isEmpty ? text.utf8.count : prefixEnd + 1
        return text
    }

    /// `text` as a URL with a scheme and a host, or the error naming it.
    func parsedURL(_ text: String, path: String, service: ServiceName) throws(ServiceError) -> URL {
        guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw ServiceError.invalidURL(service: service, path: path, reason: "\"\(text)\" is not a valid URL")
        }
        return url
    }

    /// Whether `text` starts with `http://` or `https://` (in any case) and a host.
    private static func hasHTTPScheme(_ text: Substring) -> Bool {
        var text = text
        return text.withUTF8 { hasHTTPScheme($0) }
    }

    private static func hasHTTPScheme(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { hasHTTPScheme($0) }
    }

    private static func hasHTTPScheme(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 8, bytes[0] | 0x20 == UInt8(ascii: "h"), bytes[1] | 0x20 == UInt8(ascii: "t"), bytes[2] | 0x20 == UInt8(ascii: "t"),
            bytes[3] | 0x20 == UInt8(ascii: "p")
        else { return false }
        let colon = bytes[4] | 0x20 == UInt8(ascii: "s") ? 5 : 4
        guard bytes.count > colon + 3, bytes[colon] == UInt8(ascii: ":"), bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else {
            return false
        }
        let host = bytes[colon + 3]
        return host != UInt8(ascii: "/") && host != UInt8(ascii: "?")
    }

    /// Whether a URL parser keeps `text` (a path or query) exactly as it is: only characters
    /// RFC 3986 allows there unencoded (unreserved, sub-delimiters, `:@/?`) and complete `%XX`
    /// escapes.
    private static func isPlainURLText(_ text: Substring) -> Bool {
        var text = text
        return text.withUTF8 { isPlainURLText($0) }
    }

    private static func isPlainURLText(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var bytes = text.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
                UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
                UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
                UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"):
                continue
            case UInt8(ascii: "%"):
                guard let high = bytes.next(), let low = bytes.next(), isHexDigit(high), isHexDigit(low) else { return false }
            default:
                return false
            }
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    /// Flattens nested parameters into name/value pairs, sorted by name for a stable order (keys
    /// that are whole numbers by their value, before the others: `2` before `10`).
    ///
    /// - Parameters:
    ///   - parameters: The parameters.
    ///   - arrays: How arrays are written.
    ///   - arraysByName: How the arrays of some top-level parameters are written instead.
    package static func flatten(
        _ parameters: Parameters, arrays: Parameters.ArrayEncoding, arraysByName: [String: Parameters.ArrayEncoding] = [:]
    ) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        func add(_ name: String, _ value: JSONValue, _ arrays: Parameters.ArrayEncoding) {
            switch value {
            case .null:
                break
            case .array(let values):
                let separator: String
                switch arrays {
                case .brackets, .repeatedKeys:
                    for element in values { add(arrays == .brackets ? name + "[]" : name, element, arrays) }
                    return
                case .indexed:
                    for (index, element) in values.enumerated() { add(name + "[\(index)]", element, arrays) }
                    return
                case .written(let write):
                    pairs += write(name, values.compactMap(\.textValue))
                    for element in values where element.isStructured { add(name + "[]", element, arrays) }
                    return
                case .commaSeparated: separator = ","
                case .pipeSeparated: separator = "|"
                case .spaceSeparated: separator = " "
                }
                // Scalars joined in one pair; arrays and dictionaries inside, as brackets.
                let texts = values.compactMap(\.textValue)
                if !texts.isEmpty { pairs.append((name, texts.joined(separator: separator))) }
                for element in values where element.isStructured { add(name + "[]", element, arrays) }
            case .object(let values):
                for key in values.keys.sorted(by: keyOrder) { add(name + "[" + key + "]", values[key]!, arrays) }
            default:
                if let text = value.textValue { pairs.append((name, text)) }
            }
        }
        for key in parameters.keys.sorted(by: keyOrder) { add(key, parameters[key]!, arraysByName[key] ?? arrays) }
        return pairs
    }

    /// The order of parameter keys: whole numbers first, by value (`2` before `10`, so that a
    /// dictionary keyed by indexes keeps its elements in order), then the others as text.
    package static func keyOrder(_ first: String, _ second: String) -> Bool {
        func digits(_ key: String) -> Substring? {
            guard !key.isEmpty, key.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            let significant = key.drop { $0 == "0" }
            return significant.isEmpty ? "0" : significant
        }
        switch (digits(first), digits(second)) {
        case (let one?, let other?):
            // Fewer digits, a smaller number; as many, compared as text; equal values by their zeros.
            if one.count != other.count { return one.count < other.count }
            return one != other ? one < other : first < second
        case (_?, nil): return true
        case (nil, _?): return false
        case (nil, nil): return first < second
        }
    }
}
