public import Foundation
import Logging
@_spi(CrossModule) import AIFTransport

extension FixtureTransport {
    /// Writes the responses a proxy receives as fixture files, which a mock environment then serves:
    /// run once against a real environment with recording on, then replay without the server.
    ///
    /// ```swift
    /// let recorder = FixtureTransport.Recorder(directory: URL(filePath: "Configs/fixtures"))
    /// try APIProxy.setShared(APIProxy(recorder: recorder))
    /// ```
    ///
    /// or, for the default proxy, `AIF_RECORD=Configs/fixtures` in the environment (and `aif call
    /// --record Configs/fixtures`). A response to `GET BASE/VERSION/goods/7` of the service `shop`
    /// is written to `DIRECTORY/shop/goods/7.GET.json` in the format ``FixtureTransport`` reads,
    /// before its load ends. A redirect is written as it came (its status and `Location`), and
    /// the answer at its target under the target's own path, so that a replay follows the same
    /// hops. The file keeps one answer per set of request parameters: a response
    /// for parameters already recorded replaces their answer (keeping a `delayMs` added by hand),
    /// others are added, the most specific first — so a mock environment whose `fixtures` is
    /// `DIRECTORY/shop` answers each request as the server did. Record from one environment per
    /// directory: the environment is not part of the path.
    ///
    /// What is written leaves secrets out:
    /// - the parameters are the request's query, form or JSON body members **without** the signature
    ///   fields (`sign`, `api_key`, `timestamp`, `nonce`), the parameters an ``Authenticator``
    ///   places, and any whose name looks secret (see ``isSecretName(_:)``) or is in
    ///   ``secretFields``; request headers are not written at all (the service's common
    ///   parameters, which every request carries, are left out too);
    /// - response headers leave out `Set-Cookie`, `Authorization` and the other credential
    ///   headers, and the ones that only framed the transfer (`Content-Length`,
    ///   `Transfer-Encoding`, `Content-Encoding`, `Connection`, `Date`);
    /// - in a JSON body, every member whose name looks secret reads `"***"`, at any depth;
    /// - finally, the environment's keys and the credentials the request carried (its
    ///   `Authorization` value, its secret parameters' values) read `***` wherever they still occur
    ///   — as they are, percent-encoded or in base64, in any body, the bytes of a binary body too
    ///   (before they are written as base64); a response whose path holds one is not written.
    ///
    /// The file is written on the thread the load completes on, before the load ends, so that a
    /// recording is whole when the loads are: a tool for development runs, not for production.
    ///
    /// JSON bodies are written as JSON (`body`, keys sorted), other text as `bodyText`, other bytes
    /// as `bodyBase64`. `304 Not Modified` answers, downloads (their body went to a file) and
    /// responses of mock environments are not recorded, nor responses to URLs outside the environment's base URL and version (a log
    /// line says so); a file that cannot be written is reported in a warning, and the load goes on.
    public final class Recorder: Sendable {
        /// Where the fixtures go: one folder per service.
        public let directory: URL
        /// Names of request parameters and JSON body members to leave out or redact, besides those
        /// ``isSecretName(_:)`` recognises (compared as ``isSecretName(_:)`` compares).
        public let secretFields: Set<String>
        /// Serializes the reading and rewriting of fixture files.
        private let writing = Locked(())

        /// Creates a recorder.
        ///
        /// - Parameters:
        ///   - directory: Where the fixtures go (created when needed).
        ///   - secretFields: More names to treat as secret; none by default.
        public init(directory: URL, secretFields: Set<String> = []) {
            self.directory = directory
            self.secretFields = Set(secretFields.map(Self.normalized))
        }

        /// A recorder for the directory named by `AIF_RECORD`, if it is set and not empty: what
        /// `APIProxy.init(transport:logger:retryBudget:offlineAfterFailures:recorder:observers:plugins:)`
        /// uses by default.
        ///
        /// - Parameter environment: The process environment.
        /// - Returns: The recorder, or `nil`.
        public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> FixtureTransport.Recorder? {
            guard let path = environment["AIF_RECORD"], !path.isEmpty else { return nil }
            return FixtureTransport.Recorder(directory: URL(filePath: path, directoryHint: .isDirectory))
        }

        /// Whether a parameter or body member of this name holds a secret: its name, in lower case
        /// and without `_`, `-` and `.`, contains `token`, `secret`, `password`, `passwd`, `apikey`,
        /// `credential`, `authorization`, `cookie` or `sessionid`, or is `sign` or `signature`.
        ///
        /// - Parameter name: The name.
        /// - Returns: Whether its value is left out of fixtures.
        public static func isSecretName(_ name: String) -> Bool {
            let name = normalized(name)
            return name == "sign" || name == "signature" || secretParts.contains { name.contains($0) }
        }

        private static let secretParts = ["token", "secret", "password", "passwd", "apikey", "credential", "authorization", "cookie", "sessionid"]

        private static func normalized(_ name: String) -> String {
            String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != "." })
        }

        private func isSecret(_ name: String) -> Bool {
            Self.isSecretName(name) || secretFields.contains(Self.normalized(name)) || HTTPRequest.isSecretParameter(name)
        }

        // MARK: Recording

        /// Writes a response as the fixture of its request, merged into the file's answers.
        ///
        /// - Parameters:
        ///   - request: The request as it was sent (signed).
        ///   - response: Its response (a redirect is written as it came).
        ///   - resolved: The service and environment it was made for.
        ///   - logger: Where the line saying what was written (or why not) goes.
        func record(_ request: HTTPRequest, _ response: HTTPResponse, for resolved: ServiceRegistry.ResolvedService, logger: Logger) {
            guard response.statusCode != 304, resolved.environment.mock == nil else { return }
            let method = request.method.rawValue
            let described = "\(method) \(HTTPRequest.redactedURL(request.url))"
            guard request.bodyReceiver == nil else {
                logger.warning("not recorded: the body of \(described) went to a file (a download)")
                return
            }
            let service = resolved.service.name.rawValue
            guard !service.isEmpty, !service.contains("/"), service != ".", service != ".." else {
                logger.warning("not recorded: the service name \"\(service)\" cannot name a folder")
                return
            }
            guard let segments = FixtureFile.segments(of: request.url, under: resolved.environment.versionedBaseURL), !segments.isEmpty,
                segments.allSatisfy({ $0 != "." && $0 != ".." && $0.utf8.count < 200 })
            else {
                logger.warning("not recorded: \(described) is not a path under \(resolved.environment.versionedBaseURL.absoluteString)")
                return
            }
            let secrets = request.secretValues(in: resolved.environment, secretParameter: isSecret)
            guard !segments.contains(where: { segment in secrets.contains { segment.contains($0) } }) else {
                logger.warning("not recorded: the path of \(described) holds a credential")
                return
            }
            var folder = directory.appending(path: service, directoryHint: .isDirectory)
            for segment in segments.dropLast() { folder.append(path: segment, directoryHint: .isDirectory) }
            let file = folder.appending(path: "\(segments.last!).\(method).json")
            let answer = self.answer(to: request, response, service: resolved.service, scrubbing: secrets)
            do {
                try writing.withLock { _ in
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    let answers = try Self.merging(answer, into: file)
                    try Self.text(of: answers, scrubbing: secrets).write(to: file, atomically: true, encoding: .utf8)
                }
                logger.info("recorded \(response.statusCode) for \(described) in \(file.path)")
            } catch {
                logger.warning("not recorded: \(described) could not be written to \(file.path): \(error)")
            }
        }

        /// The answer to write: status, kept headers, the parameters that are neither secret nor the
        /// service's common ones, and the body with secret members redacted (and, when it is
        /// binary, with every one of `secrets` in its bytes reading `***`: the text of the file is
        /// scrubbed again as a whole, but base64 hides them from that).
        private func answer(to request: HTTPRequest, _ response: HTTPResponse, service: any Service, scrubbing secrets: [String]) -> [String: JSONValue] {
            var answer: [String: JSONValue] = ["status": .integer(response.statusCode)]
            var parameters: [String: JSONValue] = [:]
            var common: [String: [String]] = [:]
            for (name, value) in RequestGenerator.flatten(service.commonParameters(), arrays: service.arrayEncoding) { common[name, default: []].append(value) }
            for (name, values) in RequestParameters(request, path: [:]).values
            where !RequestGenerator.signatureQueryFields.contains(name) && !isSecret(name) && common[name] != values {
                parameters[name] = values.count == 1 ? .string(values[0]) : .array(values.map(JSONValue.string))
            }
            if !parameters.isEmpty { answer["parameters"] = .object(parameters) }
            var headers: [String: String] = [:]
            for field in response.headers where !Self.headersLeftOut.contains(field.name.lowercased()) {
                headers[field.name] = headers[field.name].map { $0 + ", " + field.value } ?? field.value
            }
            if !headers.isEmpty { answer["headers"] = .object(headers.mapValues(JSONValue.string)) }
            if response.body.isEmpty {
                return answer
            } else if let json = try? JSONDecoder().decode(JSONValue.self, from: response.body) {
                answer["body"] = redacting(json)
            } else if let text = String(data: response.body, encoding: .utf8) {
                answer["bodyText"] = .string(text)
            } else {
                var bytes = response.body
                for secret in secrets { bytes = bytes.replacing(Data(secret.utf8), with: Data("***".utf8)) }
                answer["bodyBase64"] = .string(bytes.base64EncodedString())
            }
            return answer
        }

        /// Response headers fixtures leave out (in lower case): credentials, and what framed the
        /// transfer rather than described the content.
        private static let headersLeftOut = HTTPHeaders.secretNames.union(["content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive", "date"])

        /// `value` with every member whose name is secret reading `"***"`, at any depth.
        private func redacting(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let members):
                .object(Dictionary(uniqueKeysWithValues: members.map { name, member in (name, isSecret(name) ? .string("***") : redacting(member)) }))
            case .array(let elements):
                .array(elements.map(redacting))
            default:
                value
            }
        }

        /// The file's answers with `answer` in: replacing the one recorded for the same parameters,
        /// or added; those with more parameters first.
        private static func merging(_ answer: [String: JSONValue], into file: URL) throws -> [JSONValue] {
            var answers: [JSONValue] = []
            if let data = try? Data(contentsOf: file) {
                switch try? JSONDecoder().decode(JSONValue.self, from: data) {
                case .array(let list)?: answers = list
                case .object(let single)?: answers = [.object(single)]
                default: throw FixtureProblem("the fixture there is not valid JSON; it was left as it is")
                }
            }
            func parameters(_ answer: JSONValue) -> [String: JSONValue] {
                guard case .object(let members) = answer, case .object(let parameters)? = members["parameters"] else { return [:] }
                return parameters
            }
            let recorded = parameters(.object(answer))
            if let index = answers.firstIndex(where: { parameters($0) == recorded }) {
                // What only a person adds is kept: the answer's extra delay.
                var answer = answer
                if case .object(let old) = answers[index], let delay = old["delayMs"] { answer["delayMs"] = delay }
                answers[index] = .object(answer)
            } else {
                answers.append(.object(answer))
            }
            return answers.enumerated()
                .sorted { ($0.element.parameterCount, $1.offset) > ($1.element.parameterCount, $0.offset) }
                .map(\.element)
        }

        /// The file's text: one answer alone or a list, pretty-printed with sorted keys, with every
        /// secret value still present reading `***`.
        private static func text(of answers: [JSONValue], scrubbing secrets: [String]) throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            var text = String(decoding: try encoder.encode(answers.count == 1 ? answers[0] : .array(answers)), as: UTF8.self)
            for secret in secrets {
                // As the encoder writes it inside a JSON string.
                let escaped = String(decoding: try encoder.encode(secret), as: UTF8.self).dropFirst().dropLast()
                text = text.replacingOccurrences(of: String(escaped), with: "***")
            }
            return text + "\n"
        }
    }
}

extension JSONValue {
    /// How many parameters a recorded answer names.
    fileprivate var parameterCount: Int {
        guard case .object(let members) = self, case .object(let parameters)? = members["parameters"] else { return 0 }
        return parameters.count
    }
}
