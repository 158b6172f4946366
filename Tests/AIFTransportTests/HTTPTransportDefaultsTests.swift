@testable import AIFTransport
@testable import TestSupport
import Dispatch
import Foundation
import Testing

/// A transport with only the completion-handler requirement, to exercise the protocol's
/// default async face: it answers after `delay` unless cancelled first.
private final class DelayedTransport: HTTPTransport {
    private final class Pending: CancellableTransfer {
        let finish: Locked<(@Sendable (Result<HTTPResponse, TransportError>) -> Void)?>
        let url: String
        init(url: String, finish: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void) {
            self.url = url
            self.finish = Locked(finish)
        }
        func complete(_ result: Result<HTTPResponse, TransportError>) {
            let finish = self.finish.withLock { finish in
                defer { finish = nil }
                return finish
            }
            finish?(result)
        }
        func cancel() {
            complete(.failure(TransportError(.cancelled, url: url, detail: "cancelled")))
        }
    }

    let delay: Duration
    /// One entry each request handed over: a test cancels once the transport has it.
    let sent = Collected<Void>()

    init(delay: Duration) {
        self.delay = delay
    }

    func send(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        let pending = Pending(url: request.url.absoluteString, finish: completion)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000))) {
            pending.complete(.success(HTTPResponse(statusCode: 204, url: request.url)))
        }
        sent.append(())
        return pending
    }
}

@Suite("HTTPTransport default async face", .timeLimit(.minutes(1)))
struct HTTPTransportDefaultsTests {
    @Test func bridgesACompletionHandlerTransport() async throws {
        let transport = DelayedTransport(delay: .milliseconds(20))
        let response = try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1/x")!))
        #expect(response.statusCode == 204)
    }

    @Test func cancellingTheTaskCancelsThroughTheBridge() async throws {
        let transport = DelayedTransport(delay: .seconds(5))
        let task = Task { try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1/x")!)) }
        // Cancelled once the bridge has handed the request over, so that it cancels the transfer.
        _ = await transport.sent.wait(count: 1)
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result else {
            Issue.record("expected cancellation")
            return
        }
        #expect((error as? TransportError)?.code == .cancelled)
    }

    @Test func aTaskCancelledBeforeSendingCancelsAtOnce() async throws {
        let transport = DelayedTransport(delay: .seconds(5))
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate {}
            return try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1/x")!))
        }
        task.cancel()
        opener.finish()
        let started = ContinuousClock.now
        _ = await task.result
        #expect(ContinuousClock.now - started < .seconds(8))
    }
}
