import AIFServices
@_spi(CrossModule) import AIFTransport
import Foundation

/// A transport for tests: answers requests with programmed responses, after programmed delays
/// or with programmed failures, and records every request it gets.
///
/// ```swift
/// let stub = StubTransport()
/// stub.stub(.get, "goods/{id}", with: .status(503), times: 1)
/// stub.stub(.get, "goods/{id}", with: .json(#"{"id": 7, "title": "Scale", "price_cents": 1990}"#))
/// let manager = APIManager(Endpoint<Goods>(service: "shop", path: "goods/{id}"), proxy: APIProxy(transport: stub))
/// let goods = try await manager.load(["id": 7])   // a 503, retried, then the goods
/// #expect(stub.requests.count == 2)
/// ```
///
/// A request is answered by the first stub that matches it and has uses left, in the order the
/// stubs were added; a stub with `times` answers that many requests, one without answers every
/// one. A request no stub answers fails with `TransportError.invalidRequest`
/// naming it and the stubs there are — or gets `unmatched`, when the transport was given one.
/// Answers come on a Dispatch queue, never on the caller's thread, each request's exactly once
/// (a cancelled one's as `TransportError.cancelled`).
public final class StubTransport: HTTPTransport {
    private struct Stub {
        let method: HTTPMethod?
        let description: String
        let matches: @Sendable (HTTPRequest) -> Bool
        let response: StubResponse
        var usesLeft: Int?
    }

    private struct State {
        var stubs: [Stub] = []
        var requests: [HTTPRequest] = []
    }

    private let state = Locked(State())
    private let unmatched: StubResponse?
    private let clock: (any Clock)?

    /// What a stub transport's delays (``StubResponse/delayed(by:)``) run on: a test's clock,
    /// moved by hand, so that a slow answer comes when the test says. A clock a test gives its
    /// proxy (`APIProxy.Clock`) has this method already: `extension HandClock:
    /// StubTransport.Clock {}`.
    public protocol Clock: Sendable {
        /// Runs `work` once, after `delay` on this clock. It must not run `work` before it
        /// returns.
        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void)
    }

    /// Creates a transport with no stubs.
    ///
    /// ```swift
    /// let clock = HandClock()     // the test's own clock, moved by hand
    /// let stub = StubTransport(clock: clock)
    /// stub.stub(.get, "report", with: .status(200).delayed(by: .seconds(2)))
    /// let proxy = APIProxy(transport: stub, clock: clock)
    /// // … the answer comes when the test moves the clock 2 s on
    /// ```
    ///
    /// - Parameters:
    ///   - unmatched: The answer to requests no stub answers; `nil` (the default) fails them
    ///     with an error naming the request.
    ///   - clock: What the stubs' delays run on — the clock a test gives its proxy too; the
    ///     system's (a Dispatch timer) by default. An answer with no delay comes at once
    ///     whatever the clock.
    public init(unmatched: StubResponse? = nil, clock: (any Clock)? = nil) {
        self.unmatched = unmatched
        self.clock = clock
    }

    /// Answers requests with this method and path.
    ///
    /// - Parameters:
    ///   - method: The method; `nil` for any.
    ///   - path: The end of the URL's path, segment by segment (`goods/{id}` matches
    ///     `/v1/goods/7`; a `{placeholder}` stands for any one segment), or, starting with `/`,
    ///     the whole path.
    ///   - response: The answer.
    ///   - times: How many requests it answers; `nil` (the default) for every one.
    public func stub(_ method: HTTPMethod? = nil, _ path: String, with response: StubResponse, times: Int? = nil) {
        let pattern = path.split(separator: "/").map(String.init)
        let anchored = path.hasPrefix("/")
        add(Stub(method: method, description: "\(method?.rawValue ?? "any method") \(path)", matches: { request in
            let segments = request.url.path(percentEncoded: false).split(separator: "/").map(String.init)
            guard anchored ? segments.count == pattern.count : segments.count >= pattern.count else { return false }
            return zip(pattern, segments.suffix(pattern.count)).allSatisfy { expected, actual in
                (expected.hasPrefix("{") && expected.hasSuffix("}")) || expected == actual
            }
        }, response: response, usesLeft: times))
    }

    /// Answers requests a predicate accepts.
    ///
    /// - Parameters:
    ///   - description: What it matches, for errors; `"a predicate"` by default.
    ///   - matches: Whether the stub answers a request.
    ///   - response: The answer.
    ///   - times: How many requests it answers; `nil` (the default) for every one.
    public func stub(
        _ description: String = "a predicate", where matches: @escaping @Sendable (HTTPRequest) -> Bool, with response: StubResponse, times: Int? = nil
    ) {
        add(Stub(method: nil, description: description, matches: matches, response: response, usesLeft: times))
    }

    private func add(_ stub: Stub) {
        state.withLock { $0.stubs.append(stub) }
    }

    /// Every request sent, in the order they came.
    public var requests: [HTTPRequest] {
        state.withLock { $0.requests }
    }

    /// The stubs given a number of uses that still have some left (as `GET goods/{id}`): what
    /// a test expected to be asked for and was not.
    public var unusedStubs: [String] {
        state.withLock { $0.stubs.filter { ($0.usesLeft ?? 0) > 0 }.map(\.description) }
    }

    /// Removes every stub and forgets the requests.
    public func reset() {
        state.withLock { $0 = State() }
    }

    /// Records the request and answers it as its stub says, after the stub's delay.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - progress: Not called: nothing is transferred.
    ///   - completion: Called exactly once: where the clock runs its waits (a Dispatch queue
    ///     by default).
    /// - Returns: A handle that cancels the answer.
    @discardableResult
    public func send(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        let (found, known) = state.withLock { state -> (StubResponse?, [String]) in
            state.requests.append(request)
            guard let index = state.stubs.firstIndex(where: { stub in
                (stub.usesLeft ?? 1) > 0 && (stub.method == nil || stub.method == request.method) && stub.matches(request)
            }) else { return (nil, state.stubs.map(\.description)) }
            state.stubs[index].usesLeft = state.stubs[index].usesLeft.map { $0 - 1 }
            return (state.stubs[index].response, [])
        }
        let url = HTTPRequest.redactedURL(request.url)
        guard let response = found ?? unmatched else {
            let stubs = known.isEmpty ? "there are none" : "there are: " + known.joined(separator: "; ")
            let error = TransportError(.invalidRequest, url: url, detail: "no stub answers \(request.method.rawValue) \(request.url.path(percentEncoded: false)) (\(stubs))")
            return DelayedAnswer.schedule(.failure(error), after: .zero, to: request, url: url, completion: completion)
        }
        return DelayedAnswer.schedule(response.outcome(for: request, url: url), after: response.delay, on: response.delay > .zero ? clock?.schedule : nil, to: request, url: url, completion: completion)
    }
}

/// What a ``StubTransport`` answers: a response, or a transport failure, after a delay.
public struct StubResponse: Sendable {
    private enum Answer: Sendable {
        case response(status: Int, headers: HTTPHeaders, body: Data)
        case failure(TransportError.Code, detail: String)
    }

    private let answer: Answer
    /// How long the answer takes to come.
    public private(set) var delay: Duration = .zero

    private init(_ answer: Answer) {
        self.answer = answer
    }

    /// A response with this status, headers and body.
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - headers: The header fields; none by default.
    ///   - body: The body; empty by default.
    /// - Returns: The response.
    public static func status(_ status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) -> StubResponse {
        StubResponse(.response(status: status, headers: headers, body: body))
    }

    /// A JSON response, `Content-Type: application/json`.
    ///
    /// - Parameters:
    ///   - text: The JSON text.
    ///   - status: The HTTP status; 200 by default.
    ///   - headers: More header fields; none by default.
    /// - Returns: The response.
    public static func json(_ text: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> StubResponse {
        var headers = headers
        if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
        return .status(status, headers: headers, body: Data(text.utf8))
    }

    /// A transport failure instead of a response: a refused connection, a timeout, a dropped
    /// connection …
    ///
    /// - Parameters:
    ///   - code: What failed.
    ///   - detail: The error's detail; says it was stubbed by default.
    /// - Returns: The failure.
    public static func failure(_ code: TransportError.Code, detail: String = "a failure programmed in a StubTransport") -> StubResponse {
        StubResponse(.failure(code, detail: detail))
    }

    /// This answer, coming after `delay`.
    ///
    /// - Parameter delay: How long it takes.
    /// - Returns: The delayed answer.
    public func delayed(by delay: Duration) -> StubResponse {
        var delayed = self
        delayed.delay = delay
        return delayed
    }

    /// The outcome for a request.
    func outcome(for request: HTTPRequest, url: String) -> Result<HTTPResponse, TransportError> {
        switch answer {
        case .response(let status, let headers, let body):
            .success(HTTPResponse(statusCode: status, headers: headers, body: body, url: request.url))
        case .failure(let code, let detail):
            .failure(TransportError(code, url: url, detail: detail))
        }
    }
}
