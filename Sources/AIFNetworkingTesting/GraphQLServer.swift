#if TestServer
import AIFServices
@_spi(CrossModule) import AIFTransport
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// A GraphQL server for tests: one endpoint that answers as GraphQL servers over HTTP do —
/// `{"data": …, "errors": […]}`, most often in a `200` — with what a resolver of yours says
/// for each operation, on a ``LocalServer``. It keeps every operation it received.
///
/// The endpoint is `graphql` under any path (`/graphql`, `/acme/graphql`), so that two
/// environments of a service can be two base URLs on one server. It takes a POST with a JSON
/// body (`query`, `operationName`, `variables`), and a GET with those in its query, `variables`
/// as one JSON text; anything else gets a `400` with a GraphQL error that says what was wrong.
///
/// ```swift
/// let server = try await GraphQLServer.start { operation in
///     switch operation.operationName {
///     case "Viewer": .data(["viewer": ["login": "octocat"]])
///     case "Repositories": .page(of: names, at: "viewer.repositories", variables: operation.variables)
///     case "CreateIssue": .connectionDropped
///     default: .errors([GraphQLServer.Failure("unknown operation")])
///     }
/// }
/// // The service's base URL: server.baseURL(); what it received: server.received
/// ```
public final class GraphQLServer: Sendable {
    private let server: LocalServer
    private let log: Log

    private init(server: LocalServer, log: Log) {
        self.server = server
        self.log = log
    }

    /// `http://127.0.0.1:port` with `prefix` appended (no trailing slash): an environment's
    /// base URL, its endpoint at `graphql` under it.
    ///
    /// - Parameter prefix: Path segments before `graphql` (`acme`); none by default.
    /// - Returns: The base URL.
    public func baseURL(prefix: String = "") -> URL {
        let base = server.baseURL()
        return prefix.isEmpty ? base : base.appending(path: prefix)
    }

    /// Every operation received, in the order they arrived (a connection dropped on purpose
    /// included: the server had the operation).
    public var received: [Operation] {
        log.operations.withLock { $0 }
    }

    /// Stops the server (see ``LocalServer/stop()``).
    public func stop() async {
        await server.stop()
    }

    /// Starts a server answering each operation with what `resolve` returns.
    ///
    /// - Parameters:
    ///   - host: The loopback address to bind; `127.0.0.1` by default.
    ///   - resolve: The answer to an operation. It runs on the server's event loops, once for
    ///     each request that is a well-formed GraphQL request.
    /// - Returns: The running server.
    /// - Throws: When the server cannot bind.
    public static func start(host: String = "127.0.0.1", answering resolve: @escaping @Sendable (Operation) async -> Answer) async throws -> GraphQLServer {
        let log = Log()
        let router = Router(context: GraphQLRequestContext.self)
        let handle: @Sendable (Request, GraphQLRequestContext) async throws -> Response = { request, context in
            let body = try await request.body.collect(upTo: 1 << 22)
            let operation: Operation
            switch Operation.parse(request, body: body) {
            case .success(let parsed): operation = parsed
            case .failure(let problem): return Answer.badRequest(problem).response
            }
            log.operations.withLock { $0.append(operation) }
            let answer = await resolve(operation)
            if case .dropConnection = answer.shape {
                // Closed before a byte of an answer: to the client, an answer lost.
                try? await context.channel.close()
            }
            return answer.response
        }
        router.post("**", use: handle)
        router.get("**", use: handle)
        return GraphQLServer(server: try await LocalServer.start(router: router, host: host), log: log)
    }

    /// What the server keeps.
    private final class Log: Sendable {
        let operations = Locked<[Operation]>([])
    }
}

/// A request context that keeps the connection, so that an answer can be to drop it.
struct GraphQLRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}

extension GraphQLServer {
    /// An operation as the server received it.
    public struct Operation: Sendable {
        /// `POST` or `GET`.
        public var method: String
        /// The path, as sent (`/graphql`, `/acme/graphql`).
        public var path: String
        /// The header fields.
        public var headers: AIFTransport.HTTPHeaders
        /// The document.
        public var query: String
        /// The operation's name, when the request gave one.
        public var operationName: String?
        /// The variables; empty when the request gave none.
        public var variables: [String: JSONValue]

        /// Whether the document is a mutation (its first word is `mutation`).
        public var isMutation: Bool {
            query.drop(while: \.isWhitespace).hasPrefix("mutation")
        }

        /// The request's `Idempotency-Key`, if it carried one.
        public var idempotencyKey: String? {
            headers["Idempotency-Key"]
        }

        /// Creates an operation (for a resolver's own tests).
        ///
        /// - Parameters:
        ///   - method: `POST` by default.
        ///   - path: `/graphql` by default.
        ///   - headers: None by default.
        ///   - query: The document.
        ///   - operationName: None by default.
        ///   - variables: None by default.
        public init(
            method: String = "POST", path: String = "/graphql", headers: AIFTransport.HTTPHeaders = [:], query: String,
            operationName: String? = nil, variables: [String: JSONValue] = [:]
        ) {
            self.method = method
            self.path = path
            self.headers = headers
            self.query = query
            self.operationName = operationName
            self.variables = variables
        }

        /// The operation a request carries, or what is wrong with it.
        static func parse(_ request: Request, body: ByteBuffer) -> Result<Operation, Problem> {
            let path = request.uri.path
            guard path == "/graphql" || path.hasSuffix("/graphql") else { return .failure(Problem("no GraphQL endpoint at \(path); it is /graphql")) }
            var headers = AIFTransport.HTTPHeaders()
            for field in request.headers { headers.add(name: field.name.rawName, value: field.value) }
            let fields: [String: JSONValue]
            let method = request.method.rawValue
            switch request.method {
            case .post:
                guard let json = try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)), case .object(let object) = json else {
                    return .failure(Problem("the body is not a JSON object"))
                }
                fields = object
            default:
                var items: [String: JSONValue] = [:]
                for (name, value) in request.uri.queryParameters { items[String(name)] = .string(String(value)) }
                if let text = items["variables"] {
                    guard let variablesText = text.stringValue, let variables = try? JSONDecoder().decode(JSONValue.self, from: Data(variablesText.utf8)) else {
                        return .failure(Problem("`variables` is not one JSON text"))
                    }
                    items["variables"] = variables
                }
                fields = items
            }
            guard let query = fields["query"]?.stringValue, !query.isEmpty else { return .failure(Problem("the request has no `query`")) }
            let variables: [String: JSONValue]
            switch fields["variables"] {
            case nil, .null?: variables = [:]
            case .object(let object)?: variables = object
            default: return .failure(Problem("`variables` is not an object"))
            }
            let operation = Operation(
                method: method, path: path, headers: headers, query: query, operationName: fields["operationName"]?.stringValue, variables: variables)
            if operation.isMutation && request.method != .post { return .failure(Problem("a mutation is only taken in a POST")) }
            return .success(operation)
        }
    }

    /// Why a request is not a GraphQL request.
    struct Problem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// One of the `errors` of an answer.
    public struct Failure: Sendable {
        /// The message.
        public var message: String
        /// The path of the field that failed (`["viewer", "email"]`, indices as integers).
        public var path: [JSONValue]
        /// Where in the document the error is, as lines and columns from 1.
        public var locations: [(line: Int, column: Int)]
        /// `extensions`, `code` among them when one was given.
        public var extensions: [String: JSONValue]

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - message: The message.
        ///   - path: The field that failed; none by default.
        ///   - locations: Where in the document; none by default.
        ///   - code: `extensions.code`; none by default.
        ///   - extensions: Other `extensions` members; none by default.
        public init(
            _ message: String, path: [JSONValue] = [], locations: [(line: Int, column: Int)] = [], code: String? = nil, extensions: [String: JSONValue] = [:]
        ) {
            self.message = message
            self.path = path
            self.locations = locations
            var extensions = extensions
            if let code { extensions["code"] = .string(code) }
            self.extensions = extensions
        }

        var json: JSONValue {
            var object: [String: JSONValue] = ["message": .string(message)]
            if !path.isEmpty { object["path"] = .array(path) }
            if !locations.isEmpty { object["locations"] = .array(locations.map { ["line": .integer($0.line), "column": .integer($0.column)] }) }
            if !extensions.isEmpty { object["extensions"] = .object(extensions) }
            return .object(object)
        }
    }

    /// What the server answers an operation with.
    public struct Answer: Sendable {
        enum Shape {
            case respond(status: HTTPResponse.Status, headers: [(String, String)], body: JSONValue?)
            case dropConnection
        }

        let shape: Shape

        /// `{"data": data}` in a `200`.
        ///
        /// - Parameter data: The data.
        /// - Returns: The answer.
        public static func data(_ data: JSONValue) -> Answer {
            Answer(shape: .respond(status: .ok, headers: [], body: ["data": data]))
        }

        /// `{"errors": […]}` in a `200`, with `data` beside them when given (the fields that
        /// failed `null` in it).
        ///
        /// - Parameters:
        ///   - errors: The errors.
        ///   - data: The partial data; none by default.
        ///   - headers: Header fields of the answer; none by default.
        /// - Returns: The answer.
        public static func errors(_ errors: [Failure], data: JSONValue? = nil, headers: [(name: String, value: String)] = []) -> Answer {
            var body: [String: JSONValue] = ["errors": .array(errors.map(\.json))]
            if let data { body["data"] = data }
            return Answer(shape: .respond(status: .ok, headers: headers.map { ($0.name, $0.value) }, body: .object(body)))
        }

        /// A rate limit as GitHub reports it: an error with `extensions.code` in a `200`, and
        /// `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset` (Unix seconds) in its headers.
        ///
        /// - Parameters:
        ///   - reset: When the limit resets.
        ///   - code: The error's code; `RATE_LIMITED` by default.
        /// - Returns: The answer.
        public static func rateLimited(until reset: Date, code: String = "RATE_LIMITED") -> Answer {
            errors(
                [Failure("API rate limit exceeded", code: code)],
                headers: [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", String(Int(reset.timeIntervalSince1970.rounded(.up))))])
        }

        /// A status with no GraphQL body (a `503` of a proxy in front of the server, say).
        ///
        /// - Parameters:
        ///   - status: The status code.
        ///   - headers: Header fields; none by default.
        /// - Returns: The answer.
        public static func status(_ status: Int, headers: [(name: String, value: String)] = []) -> Answer {
            Answer(shape: .respond(status: HTTPResponse.Status(code: status), headers: headers.map { ($0.name, $0.value) }, body: nil))
        }

        /// The connection closed without a byte of an answer, after the operation was received
        /// (whether it was applied is the resolver's to say): to the client, an answer lost.
        public static let connectionDropped = Answer(shape: .dropConnection)

        /// A page of a Relay connection of `nodes`, at `path` inside `data`: the page after the
        /// cursor in `variables[cursorVariable]` (each node's cursor is its index), of the size
        /// in `variables[sizeVariable]`, as `nodes` and as `edges` with their cursors, with
        /// `pageInfo { hasNextPage endCursor hasPreviousPage startCursor }` and `totalCount`. The
        /// last page keeps its `endCursor`, as Relay servers do. A missing or negative size, or
        /// a cursor that is not one of this connection's, is answered with an error.
        ///
        /// - Parameters:
        ///   - nodes: Every node of the connection.
        ///   - path: Where the connection is inside `data`, as dot-separated members
        ///     (`viewer.repositories`).
        ///   - variables: The operation's variables.
        ///   - sizeVariable: The page size's variable; `first` by default.
        ///   - cursorVariable: The cursor's variable; `after` by default.
        /// - Returns: The answer.
        public static func page(
            of nodes: [JSONValue], at path: String, variables: [String: JSONValue], sizeVariable: String = "first", cursorVariable: String = "after"
        ) -> Answer {
            guard let size = variables[sizeVariable]?.intValue, size >= 0 else {
                return errors([Failure("`\(sizeVariable)` must be a whole number of at least 0 to page the connection", code: "INVALID_ARGUMENT")])
            }
            var start = 0
            switch variables[cursorVariable] {
            case nil, .null?:
                break
            case .string(let cursor)? where Int(cursor).map({ nodes.indices.contains($0) }) == true:
                start = Int(cursor)! + 1
            default:
                return errors([Failure("`\(cursorVariable)` is not a cursor of this connection", code: "INVALID_CURSOR")])
            }
            let end = min(nodes.count, start + size)
            let page = Array(start..<end)
            var connection: JSONValue = [
                "nodes": .array(page.map { nodes[$0] }),
                "edges": .array(page.map { ["cursor": .string(String($0)), "node": nodes[$0]] }),
                "pageInfo": [
                    "hasNextPage": .bool(end < nodes.count), "endCursor": page.last.map { .string(String($0)) } ?? .null,
                    "hasPreviousPage": .bool(start > 0), "startCursor": page.first.map { .string(String($0)) } ?? .null,
                ],
                "totalCount": .integer(nodes.count),
            ]
            for member in path.split(separator: ".").reversed() { connection = .object([String(member): connection]) }
            return data(connection)
        }

        /// A `400` whose error says what was wrong with the request.
        static func badRequest(_ problem: Problem) -> Answer {
            Answer(shape: .respond(status: .badRequest, headers: [], body: ["errors": [["message": .string(problem.message)]]]))
        }

        /// The answer as Hummingbird sends it.
        var response: Response {
            switch shape {
            case .respond(let status, let extra, let body):
                var headers: HTTPFields = [:]
                for (name, value) in extra { if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) } }
                guard let body else { return Response(status: status, headers: headers) }
                if headers[.contentType] == nil { headers[.contentType] = "application/json" }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let bytes = (try? encoder.encode(body)) ?? Data(#"{"errors":[{"message":"the answer could not be written"}]}"#.utf8)
                return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            case .dropConnection:
                return Response(status: .internalServerError)
            }
        }
    }
}
#endif
