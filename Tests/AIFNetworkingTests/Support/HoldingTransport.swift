@testable import AIFNetworking
@testable import TestSupport
import Foundation

/// A transport that keeps every request until the test answers it, and does not give one up
/// when asked to cancel it — as a transport slow to stop a transfer. A test waits for a request
/// to arrive without polling (``waitUntilSent(_:)``).
final class HoldingTransport: HTTPTransport {
    private struct Unstoppable: CancellableTransfer {
        let transport: HoldingTransport
        func cancel() { transport.state.withLock { $0.cancelsAsked += 1 } }
    }

    private struct State {
        var sent = 0
        var cancelsAsked = 0
        var held: [(request: HTTPRequest, completion: @Sendable (Result<HTTPResponse, TransportError>) -> Void)] = []
        var waiting: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// How many requests wait for their answer.
    var held: Int { state.withLock { $0.held.count } }
    /// How many requests were sent.
    var sent: Int { state.withLock { $0.sent } }
    /// How many times a transfer was asked to stop.
    var cancelsAsked: Int { state.withLock { $0.cancelsAsked } }

    /// Returns once `count` requests have been sent.
    func waitUntilSent(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.sent >= count { return true }
                state.waiting.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    func send(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.sent += 1
            state.held.append((request, completion))
            let sent = state.sent
            let ready = state.waiting.filter { $0.count <= sent }.map(\.continuation)
            state.waiting.removeAll { $0.count <= sent }
            return ready
        }
        for continuation in ready { continuation.resume() }
        return Unstoppable(transport: self)
    }

    /// Answers every request held with an empty response of `status`.
    func answerAll(with status: Int) {
        let all = state.withLock { state in
            defer { state.held.removeAll() }
            return state.held
        }
        for (request, completion) in all {
            completion(.success(HTTPResponse(statusCode: status, headers: HTTPHeaders(), body: Data(), url: request.url)))
        }
    }
}
