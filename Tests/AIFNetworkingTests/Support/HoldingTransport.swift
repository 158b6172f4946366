@testable import AIFNetworking
@testable import TestSupport
import Foundation
@_spi(CrossModule) import AIFTransport

/// A transport that keeps every request until the test answers it, and does not give one up
/// when asked to cancel it — as a transport slow to stop a transfer. A test waits for a request
/// to arrive without polling (``waitUntilSent(_:)``).
final class HoldingTransport: HTTPTransport {
    private struct Unstoppable: CancellableTransfer {
        let transport: HoldingTransport
        func cancel() {
            let ready = transport.state.withLock { state in
                state.cancelsAsked += 1
                return state.ready(\.waitingCancels, at: state.cancelsAsked)
            }
            for arrived in ready { arrived(()) }
        }
    }

    /// A test waiting for a count to be reached, and what tells it.
    private typealias Waiter = (count: Int, arrived: @Sendable (()) -> Void)

    private struct State {
        var sent = 0
        var cancelsAsked = 0
        var held: [(request: HTTPRequest, completion: @Sendable (Result<HTTPResponse, TransportError>) -> Void)] = []
        var waiting: [Waiter] = []
        var waitingCancels: [Waiter] = []

        /// Takes out of `list` the waiters `count` satisfies.
        mutating func ready(_ list: WritableKeyPath<State, [Waiter]>, at count: Int) -> [@Sendable (()) -> Void] {
            defer { self[keyPath: list].removeAll { $0.count <= count } }
            return self[keyPath: list].filter { $0.count <= count }.map(\.arrived)
        }
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
        await wait(until: \.sent, reaches: count, in: \.waiting)
    }

    /// Returns once transfers have been asked to stop `count` times. (A load ends at once when
    /// cancelled; its transfer is asked to stop as the load hands it over, which may come
    /// just after — when the cancellation came as the transport's `send` returned.)
    func waitForCancelsAsked(_ count: Int) async {
        await wait(until: \.cancelsAsked, reaches: count, in: \.waitingCancels)
    }

    private func wait(
        until counter: KeyPath<State, Int>, reaches count: Int,
        in list: WritableKeyPath<State, [Waiter]>
    ) async {
        await event { (arrived: @escaping @Sendable (()) -> Void) in
            let now = state.withLock { state -> Bool in
                if state[keyPath: counter] >= count { return true }
                state[keyPath: list].append((count, arrived))
                return false
            }
            if now { arrived(()) }
        }
    }

    func send(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        let ready = state.withLock { state -> [@Sendable (()) -> Void] in
            state.sent += 1
            state.held.append((request, completion))
            return state.ready(\.waiting, at: state.sent)
        }
        for arrived in ready { arrived(()) }
        return Unstoppable(transport: self)
    }

    /// Answers every request held with an empty response of `status`.
    func answerAll(with status: Int) {
        for (request, completion) in takeAll() {
            completion(.success(HTTPResponse(statusCode: status, headers: HTTPHeaders(), body: Data(), url: request.url)))
        }
    }

    /// Ends every request held with a transport error of `code` (a cancelled transfer's end,
    /// say).
    func failAll(with code: TransportError.Code) {
        for (request, completion) in takeAll() {
            completion(.failure(TransportError(code, url: request.url.absoluteString, detail: "ended by the test")))
        }
    }

    private func takeAll() -> [(request: HTTPRequest, completion: @Sendable (Result<HTTPResponse, TransportError>) -> Void)] {
        state.withLock { state in
            defer { state.held.removeAll() }
            return state.held
        }
    }
}
