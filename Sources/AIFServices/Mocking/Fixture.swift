import Foundation

/// One answer of a fixture file.
struct Fixture {
    /// The parameters the request must carry for this answer, as text (each value of a
    /// repeated one); none matches every request.
    var parameters: [String: [String]]
    var status: Int
    var headers: HTTPHeaders
    var body: Data
    /// How much longer than the environment's latency this answer takes.
    var delay: Duration

    /// Whether a request with these parameters gets this answer.
    func matches(_ request: RequestParameters) -> Bool {
        parameters.allSatisfy { name, values in
            values.allSatisfy { request.values[name]?.contains($0) == true }
        }
    }

    /// The answers in a file, in order.
    static func read(_ file: URL) throws -> [Fixture] {
        let data = try Data(contentsOf: file)
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw FixtureProblem("it is not valid JSON")
        }
        let entries: [JSONValue]
        if case .array(let list) = root { entries = list } else { entries = [root] }
        return try entries.enumerated().map { index, entry throws in
            guard case .object(let object) = entry else { throw FixtureProblem("answer \(index + 1) is not a JSON object") }
            return try Fixture(object, index: index)
        }
    }

    private init(_ object: [String: JSONValue], index: Int) throws {
        let place = "answer \(index + 1)"
        let known: Set<String> = ["parameters", "status", "headers", "body", "bodyText", "bodyBase64", "delayMs"]
        if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
            throw FixtureProblem("\(place) has an unknown key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        status = 200
        if let value = object["status"] {
            guard case .integer(let number) = value, (100...599).contains(number) else { throw FixtureProblem("\(place): status must be an HTTP status (100–599)") }
            status = number
        }
        delay = .zero
        if let value = object["delayMs"] {
            guard case .integer(let milliseconds) = value, milliseconds >= 0 else { throw FixtureProblem("\(place): delayMs must be a whole number of milliseconds, 0 or more") }
            delay = .milliseconds(milliseconds)
        }
        var headers = HTTPHeaders()
        if let value = object["headers"] {
            guard case .object(let fields) = value else { throw FixtureProblem("\(place): headers must be an object of strings") }
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
                guard case .string(let text) = value else { throw FixtureProblem("\(place): header \(name) must be a string") }
                headers.add(name: name, value: text)
            }
        }
        let bodies = ["body", "bodyText", "bodyBase64"].filter { object[$0] != nil }
        guard bodies.count <= 1 else { throw FixtureProblem("\(place) has \(bodies.joined(separator: " and ")): give one body") }
        switch bodies.first {
        case "body":
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            body = try encoder.encode(object["body"]!)
            if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
        case "bodyText":
            guard case .string(let text)? = object["bodyText"] else { throw FixtureProblem("\(place): bodyText must be a string") }
            body = Data(text.utf8)
        case "bodyBase64":
            guard case .string(let text)? = object["bodyBase64"], let bytes = Data(base64Encoded: text) else {
                throw FixtureProblem("\(place): bodyBase64 must be base64 text")
            }
            body = bytes
        default:
            body = Data()
        }
        self.headers = headers
        var parameters: [String: [String]] = [:]
        if let value = object["parameters"] {
            guard case .object(let fields) = value else { throw FixtureProblem("\(place): parameters must be an object") }
            for (name, value) in fields {
                let values: [JSONValue]
                if case .array(let list) = value { values = list } else { values = [value] }
                let texts = values.compactMap(\.parameterText)
                guard texts.count == values.count, !texts.isEmpty else {
                    throw FixtureProblem("\(place): parameter \(name) must be a string, number or boolean, or a list of them (each value of a repeated parameter)")
                }
                parameters[name] = texts
            }
        }
        self.parameters = parameters
    }
}

/// What is wrong with a fixture file.
struct FixtureProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Where the fixture of a request is: `FIXTURES/a/b.METHOD.json`, each name literal or, failing
/// that, a `{placeholder}`.
enum FixtureFile {
    /// The path segments of `url` under `root` (`BASE/VERSION`), decoded; `nil` when `url` is
    /// not under `root`.
    static func segments(of url: URL, under root: URL) -> [String]? {
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        guard url.host == root.host, url.port == root.port, url.path.hasPrefix(rootPath) || url.path + "/" == rootPath else { return nil }
        return url.path.dropFirst(rootPath.count).split(separator: "/").map(String.init)
    }

    /// The fixture file for a path, and what its placeholders stand for (`{id}` → `7`).
    static func find(_ segments: [String], method: String, in directory: URL) -> (file: URL, bound: [String: String])? {
        guard let first = segments.first else { return nil }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let placeholders = names.filter { $0.hasPrefix("{") }.sorted()
        func name(of placeholder: String) -> String {
            String(placeholder.dropFirst().prefix { $0 != "}" })
        }
        if segments.count == 1 {
            let literal = "\(first).\(method).json"
            if names.contains(literal) { return (directory.appending(path: literal), [:]) }
            return placeholders.first { $0.hasSuffix("}.\(method).json") }.map { (directory.appending(path: $0), [name(of: $0): first]) }
        }
        let rest = Array(segments.dropFirst())
        if names.contains(first), let found = find(rest, method: method, in: directory.appending(path: first)) { return found }
        for folder in placeholders where folder.hasSuffix("}") {
            if let found = find(rest, method: method, in: directory.appending(path: folder)) {
                return (found.file, found.bound.merging([name(of: folder): first]) { inner, _ in inner })
            }
        }
        return nil
    }
}

/// The parameters a request carries, by name: the path's placeholders, its query items, and
/// its form fields or the top-level members of its JSON object body.
struct RequestParameters: CustomStringConvertible {
    var values: [String: [String]] = [:]

    init(_ request: HTTPRequest, path bound: [String: String]) {
        for (name, value) in bound { values[name, default: []].append(value) }
        for item in URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            values[item.name, default: []].append(item.value ?? "")
        }
        guard case .bytes(let body) = request.body, !body.isEmpty else { return }
        if case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: body) {
            for (name, value) in object { if let text = value.parameterText { values[name, default: []].append(text) } }
        } else if request.headers["Content-Type"]?.hasPrefix("application/x-www-form-urlencoded") == true {
            var form = URLComponents()
            form.percentEncodedQuery = String(decoding: body, as: UTF8.self).replacingOccurrences(of: "+", with: "%20")
            for item in form.queryItems ?? [] { values[item.name, default: []].append(item.value ?? "") }
        }
    }

    /// The parameters as `name=value&…`, for an error: without the signature fields, and with
    /// the values of secret ones reading `***`.
    var description: String {
        values.keys.sorted().filter { !RequestGenerator.signatureQueryFields.contains($0) }.map { name in
            let shown = FixtureTransport.Recorder.isSecretName(name) || HTTPRequest.isSecretParameter(name) ? "***" : values[name]!.joined(separator: ",")
            return "\(name)=\(shown)"
        }.joined(separator: "&")
    }
}
