import AIFNetworking
import Dispatch
import Foundation
import ProcessResources

#if canImport(Glibc)
import Glibc
@_spi(CrossModule) import AIFTransport
#endif

/// `in-flight URL COUNT MODE`: puts COUNT requests for URL (a route that answers a while later)
/// in flight at once on one transport, and MODE says how they end:
/// - `complete`: every one is answered;
/// - `cancel-half`: a random half is cancelled, each at a random moment in its first 800 ms;
/// - `shutdown ALL-ARRIVED-URL`: the transport is shut down with all of them in flight: once
///   ALL-ARRIVED-URL answers, which the server does when every one has reached it.
///
/// It prints one line of counts for the test to judge — how many ended answered, cancelled or
/// failed otherwise, how many never ended or ended twice, and the open descriptors before the
/// transport and after it is gone — and the first unexpected failure, if any.
func inFlight(url: URL, count: Int, mode: String, allArrived: URL? = nil) async throws {
    raiseDescriptorLimit()
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    guard limit.rlim_cur >= rlim_t(count + 256) else {
        print("error: \(count) connections need more open files than this process may have (\(limit.rlim_cur))")
        exit(3)
    }
    // The runtime opens descriptors of its own the first time they are needed (Dispatch's timers,
    // for one): a first transport, used and gone before the count, leaves only the transport's.
    do {
        let transport = CurlTransport(configuration: .init(proxy: .none))
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            let task = transport.send(HTTPRequest(url: url), progress: nil) { _ in ended.resume() }
            // Cancelled from a Dispatch timer: its descriptor is opened here, not in the count.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { task.cancel() }
        }
        transport.shutdown()
    }
    let descriptorsBefore = openDescriptorCount()
    let ledger = InFlightLedger(count: count)
    var shutdownSeconds = 0.0
    do {
        var configuration = CurlTransport.Configuration(proxy: .none)
        configuration.connectionPool.maxConnectionsPerHost = count + 1   // and the server's signal
        let transport = CurlTransport(configuration: configuration)
        var tasks: [any CancellableTransfer] = []
        tasks.reserveCapacity(count)
        for index in 0..<count {
            tasks.append(transport.send(HTTPRequest(url: url), progress: nil) { result in ledger.record(index, result) })
        }
        switch mode {
        case "cancel-half":
            var random = SystemRandomNumberGenerator()
            for index in Array(0..<count).shuffled(using: &random).prefix(count / 2) {
                ledger.markCancelled(index)
                let task = tasks[index]
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int.random(in: 0..<800, using: &random))) { task.cancel() }
            }
        case "shutdown":
            if let allArrived { _ = try await transport.send(HTTPRequest(url: allArrived)) }
            let start = ContinuousClock.now
            transport.shutdown()
            shutdownSeconds = (ContinuousClock.now - start) / .seconds(1)
        default:
            break
        }
        // Every request ended — or 90 seconds passed, and the summary counts those missing.
        await ledger.allEnded(within: .seconds(90))
        // Its shutdown returns once its thread has run every completion it ever will: a late
        // second one, if there were any, is counted by then.
        transport.shutdown()
        tasks.removeAll()
    }
    // Shutdown returns with the transport's descriptors (its connections, its epoll set and
    // wake-up eventfd) closed: counted at once, not after a grace period.
    let descriptorsAfter = openDescriptorCount()
    print(ledger.summary + String(format: " shutdown-seconds=%.2f", shutdownSeconds) + " fds-before=\(descriptorsBefore) fds-after=\(descriptorsAfter)")
    if let failure = ledger.firstUnexpectedFailure { print("first-failure: \(failure)") }
}

/// What each of the requests did: how often it ended, and how.
final class InFlightLedger: Sendable {
    private struct State {
        var endings: [Int]
        var cancelRequested: [Bool]
        var answered = 0
        var answeredThoughCancelled = 0
        var cancelled = 0
        var cancelledUnasked = 0
        var otherFailures = 0
        var firstUnexpectedFailure: String?
        var ended = 0
    }

    private let state: Locked<State>
    /// Given as the last request ends (a second ending does not count).
    private let lastEnded = OnceSignal()

    init(count: Int) {
        state = Locked(State(endings: Array(repeating: 0, count: count), cancelRequested: Array(repeating: false, count: count)))
    }

    func markCancelled(_ index: Int) {
        state.withLock { $0.cancelRequested[index] = true }
    }

    func record(_ index: Int, _ result: Result<HTTPResponse, TransportError>) {
        let last = state.withLock { state -> Bool in
            state.endings[index] += 1
            guard state.endings[index] == 1 else { return false }
            state.ended += 1
            tally(result, of: index, in: &state)
            return state.ended == state.endings.count
        }
        if last { lastEnded.give() }
    }

    /// Returns once every request has ended, or when `limit` passes first.
    func allEnded(within limit: Duration) async {
        await lastEnded.wait(atMost: limit)
    }

    private func tally(_ result: Result<HTTPResponse, TransportError>, of index: Int, in state: inout State) {
        switch result {
        case .success(let response) where response.statusCode == 200:
            state.answered += 1
            if state.cancelRequested[index] { state.answeredThoughCancelled += 1 }
        case .failure(let error) where error.code == .cancelled:
            state.cancelled += 1
            if !state.cancelRequested[index] { state.cancelledUnasked += 1 }
        default:
            state.otherFailures += 1
            if state.firstUnexpectedFailure == nil { state.firstUnexpectedFailure = "\(result)" }
        }
    }

    var firstUnexpectedFailure: String? {
        state.withLock { $0.firstUnexpectedFailure }
    }

    var summary: String {
        state.withLock { state in
            "answered=\(state.answered) cancelled=\(state.cancelled) cancelled-unasked=\(state.cancelledUnasked) "
                + "answered-though-cancelled=\(state.answeredThoughCancelled) failed=\(state.otherFailures) "
                + "missing=\(state.endings.count { $0 == 0 }) duplicated=\(state.endings.count { $0 > 1 })"
        }
    }
}
