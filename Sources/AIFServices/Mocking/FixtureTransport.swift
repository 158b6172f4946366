public import Foundation
@_spi(CrossModule) import AIFTransport

/// A transport that answers from fixture files — what a ``ServiceEnvironment/MockBehavior`` environment sends
/// through, and a stand-in users can give an `APIProxy` in their own tests.
///
/// A request for `BASE/VERSION/goods/7` with method GET is answered from
/// `FIXTURES/goods/7.GET.json`, or else from a file or folder named as a placeholder in that
/// place (`goods/{id}.GET.json`): literal names first. A file holds one answer or a list of
/// them; an answer may name `parameters`, and is then chosen only when the request carries
/// each of them (in a placeholder of its path, its query, or its form or JSON body; a list names
/// every value of a repeated parameter); the first that matches answers.
///
/// ```json
/// [
///     { "parameters": { "id": 404 }, "status": 404, "body": { "code": 4040, "message": "no such goods" } },
///     { "status": 200, "headers": { "ETag": "\"g7\"" }, "body": { "id": 7, "title": "Scale" } }
/// ]
/// ```
///
/// `body` is any JSON (sent with `Content-Type: application/json` unless the headers say
/// otherwise); `bodyText` or `bodyBase64` send other bytes; `status` is 200 unless given;
/// `delayMs` holds this answer back that much longer than the drawn latency (a slow endpoint). A
/// request no fixture answers fails with an error naming the file looked for. Latency and
/// injected failures follow the ``ServiceEnvironment/MockBehavior``; every request ends exactly once, including
/// when it is cancelled during its latency.
public final class FixtureTransport: HTTPTransport {
    /// How it behaves.
    public let behavior: ServiceEnvironment.MockBehavior
    /// The URL the fixture paths are relative to: the environment's base URL and version.
    public let root: URL
    private let generator: Locked<any RandomNumberGenerator>

    /// Creates a transport answering from `behavior`'s fixtures for requests under `root`.
    ///
    /// - Parameters:
    ///   - behavior: The fixtures, latency and failures.
    ///   - root: The URL fixture paths are relative to (base URL and version).
    public init(behavior: ServiceEnvironment.MockBehavior, root: URL) {
        self.behavior = behavior
        self.root = root
        generator = Locked(behavior.seed.map { SeededGenerator(seed: $0) as any RandomNumberGenerator } ?? SystemRandomNumberGenerator())
    }

    /// Creates a transport for a mock environment.
    ///
    /// - Parameters:
    ///   - behavior: The fixtures, latency and failures.
    ///   - environment: The environment whose base URL and version the paths are relative to.
    public convenience init(behavior: ServiceEnvironment.MockBehavior, environment: ServiceEnvironment) {
        self.init(behavior: behavior, root: environment.versionedBaseURL)
    }

    /// Answers the request from its fixture after the drawn latency (or fails it, as drawn).
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - progress: Not called: nothing is transferred.
    ///   - completion: Called exactly once, on a Dispatch queue.
    /// - Returns: A handle that cancels the answer.
    @discardableResult
    public func send(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        var (delay, failure) = draw()
        let url = HTTPRequest.redactedURL(request.url)
        let outcome: Result<HTTPResponse, TransportError>
        switch failure {
        case .status(let status)?:
            outcome = .success(HTTPResponse(
                statusCode: status, headers: ["Content-Type": "application/json"],
                body: Data("{\"message\": \"a failure injected by the mock environment\"}".utf8), url: request.url))
        case .timeout?:
            outcome = .failure(TransportError(.totalTimeout, url: url, detail: "a timeout injected by the mock environment"))
        case .connectionDropped?:
            outcome = .failure(TransportError(.connectionDropped, url: url, detail: "a dropped connection injected by the mock environment"))
        case nil:
            do {
                let (response, extra) = try answer(request)
                outcome = .success(response)
                delay += extra
            } catch {
                outcome = .failure(error)
            }
        }
        return DelayedAnswer.schedule(outcome, after: delay, to: request, url: url, completion: completion)
    }

    /// This request's latency and failure, drawn in order from the behavior's generator.
    private func draw() -> (Duration, ServiceEnvironment.MockBehavior.Failure?) {
        generator.withLock { generator in
            let bounds = behavior.latency
            let span = (bounds.upperBound - bounds.lowerBound).timeInterval
            let delay = bounds.lowerBound + .seconds(span > 0 ? Double.random(in: 0...span, using: &generator) : 0)
            let fails = behavior.failureRate > 0 && Double.random(in: 0..<1, using: &generator) < behavior.failureRate
            return (delay, fails ? behavior.failures.randomElement(using: &generator) : nil)
        }
    }

    /// The fixture's answer to a request, and the delay its fixture adds to the latency.
    func answer(_ request: HTTPRequest) throws(TransportError) -> (HTTPResponse, Duration) {
        let url = HTTPRequest.redactedURL(request.url)
        func failure(_ detail: String) -> TransportError { TransportError(.invalidRequest, url: url, detail: detail) }
        guard let segments = FixtureFile.segments(of: request.url, under: root) else {
            throw failure("the mock environment answers requests under \(root.absoluteString) only")
        }
        let method = request.method.rawValue
        guard let (file, bound) = FixtureFile.find(segments, method: method, in: behavior.fixtures) else {
            let wanted = behavior.fixtures.appending(path: segments.joined(separator: "/") + ".\(method).json").path
            throw failure("no fixture for \(method) \(segments.joined(separator: "/")): looked for \(wanted) (or a {placeholder} file or folder in its place)")
        }
        let fixtures: [Fixture]
        do {
            fixtures = try Fixture.read(file)
        } catch {
            throw failure("the fixture \(file.path) cannot be used: \(error)")
        }
        let parameters = RequestParameters(request, path: bound)
        guard let fixture = fixtures.first(where: { $0.matches(parameters) }) else {
            throw failure("no answer in \(file.path) matches the request's parameters (\(parameters.description))")
        }
        return (HTTPResponse(statusCode: fixture.status, headers: fixture.headers, body: fixture.body, url: request.url), fixture.delay)
    }
}
