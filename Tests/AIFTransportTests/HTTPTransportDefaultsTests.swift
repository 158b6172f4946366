@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Dispatch
import Foundation
import Testing

/// A transport with only the completion-handler requirement, to exercise the protocol's
/// default async face: it answers when the test says (``answerAll()``), unless cancelled first.
private final class HeldTransport: HTTPTransport {
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

    private let pending = Locked<[Pending]>([])
    /// One entry each request handed over: a test cancels once the transport has it.
    let sent = Collected<Void>()

    func send(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        let transfer = Pending(url: request.url.absoluteString, finish: completion)
        pending.withLock { $0.append(transfer) }
        sent.append(())
        return transfer
    }

    /// Answers every request handed over so far `204 No Content` (those not cancelled first).
    func answerAll() {
        for transfer in pending.withLock({ $0 }) {
            transfer.complete(.success(HTTPResponse(statusCode: 204, url: URL(string: transfer.url)!)))
        }
    }
}

@Suite("HTTPTransport default async face", .timeLimit(.minutes(1)))
struct HTTPTransportDefaultsTests {
    @Test func bridgesACompletionHandlerTransport() async throws {
        let transport = HeldTransport()
        let task = Task { try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1/x")!)) }
        _ = await transport.sent.wait(count: 1)
        transport.answerAll()
        #expect(try await task.value.statusCode == 204)
    }

    @Test func cancellingTheTaskCancelsThroughTheBridge() async throws {
        let transport = HeldTransport()   // never answers: only the cancellation ends the load
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
        let transport = HeldTransport()
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate {}
            return try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1/x")!))
        }
        task.cancel()
        opener.finish()
        // The transport never answers: the task ends because it was cancelled, and at once.
        guard case .failure(let error) = await task.result else {
            Issue.record("expected cancellation")
            return
        }
        #expect((error as? TransportError)?.code == .cancelled, "\(error)")
    }
}
