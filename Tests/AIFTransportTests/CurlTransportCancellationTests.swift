@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("CurlTransport: cancellation, shutdown, exactly-once completion", .timeLimit(.minutes(2)))
struct CurlTransportCancellationTests {
    @Test func cancelRightAfterSubmitting() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let ledger = CompletionLedger()
        let results = Locked([Result<HTTPResponse, TransportError>]())
        let task = transport.send(HTTPRequest(url: server.url("slow/2000"))) { result in
            results.withLock { $0.append(result) }
            ledger.record(0)
        }
        let cancelledAt = ContinuousClock.now
        task.cancel()
        await ledger.wait(total: 1)
        #expect(ContinuousClock.now - cancelledAt < .seconds(1))
        task.cancel()
        // Once shut down, the transport has run every completion it ever will: a second one
        // would be in the ledger now.
        transport.shutdown()
        #expect(ledger.anomalies(expecting: 1).isEmpty)
        #expect(results.withLock { $0.first?.error?.code } == .cancelled)
    }

    @Test func cancelDuringTheResponseBody() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let ledger = CompletionLedger()
        let results = Locked([Result<HTTPResponse, TransportError>]())
        let progress = Collected<Int64>()
        let task = transport.send(
            HTTPRequest(url: server.url("held/1")),
            progress: { progress.append($0.bytesReceived) }
        ) { result in
            results.withLock { $0.append(result) }
            ledger.record(0)
        }
        // Cancelled once the first bytes have come: the server holds the rest of the body open,
        // so the cancellation lands in it.
        for count in 1...1_000 {
            if await progress.wait(count: count).last ?? 0 > 0 { break }
        }
        task.cancel()
        await ledger.wait(total: 1)   // only the cancellation can end it
        transport.shutdown()   // every completion it will ever run has run
        #expect(ledger.anomalies(expecting: 1).isEmpty)
        #expect(results.withLock { $0.first?.error?.code } == .cancelled)
    }

    @Test func cancelAfterTheResponseDoesNothing() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let ledger = CompletionLedger()
        let results = Locked([Result<HTTPResponse, TransportError>]())
        let task = transport.send(HTTPRequest(url: server.url("bytes/10"))) { result in
            results.withLock { $0.append(result) }
            ledger.record(0)
        }
        await ledger.wait(total: 1)
        task.cancel()
        task.cancel()
        transport.shutdown()   // every completion it will ever run has run
        #expect(ledger.anomalies(expecting: 1).isEmpty)
        #expect(try results.withLock { try $0.first?.get().body.count } == 10)
    }

    @Test func cancellingTheSwiftTaskCancelsTheTransfer() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let tag = Arrivals.tag()
        let url = server.url("slow/20000?tag=\(tag)")
        let task = Task { try await transport.send(HTTPRequest(url: url)) }
        // Cancelled while the server holds the request.
        await Arrivals.shared.wait(for: tag)
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - cancelledAt < .seconds(8))
        #expect(cancellationCode(result) == .cancelled)
    }

    @Test func aTaskCancelledBeforeSendingNeverSends() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let url = server.url("slow/20000")
        let task = Task {
            // An AsyncStream ends its iteration as soon as the task is cancelled.
            for await _ in gate {}
            return try await transport.send(HTTPRequest(url: url))
        }
        task.cancel()
        opener.finish()
        let started = ContinuousClock.now
        let result = await task.result
        #expect(ContinuousClock.now - started < .seconds(8))
        #expect(cancellationCode(result) == .cancelled)
    }

    @Test func twoThousandConcurrentRequestsEachEndExactlyOnce() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 64 }
        defer { transport.shutdown() }
        let count = 2_000
        let ledger = CompletionLedger()
        let wrong = Locked([Int]())
        for index in 0..<count {
            let payload = Data("request number \(index)".utf8)
            transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .bytes(payload))) { result in
                if (try? result.get().body) != payload { wrong.withLock { $0.append(index) } }
                ledger.record(index)
            }
        }
        await ledger.wait(total: count)
        transport.shutdown()   // every completion it will ever run has run
        #expect(ledger.anomalies(expecting: count).isEmpty)
        #expect(wrong.withLock { $0 }.isEmpty)
    }

    @Test func twoThousandConcurrentAsyncRequests() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 64 }
        defer { transport.shutdown() }
        let matched = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<2_000 {
                group.addTask {
                    let payload = Data("async request \(index)".utf8)
                    let response = try await transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .bytes(payload)))
                    return response.body == payload
                }
            }
            var matched = 0
            for try await ok in group where ok { matched += 1 }
            return matched
        }
        #expect(matched == 2_000)
    }

    @Test func shutdownCancelsRequestsInFlight() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        let count = 50
        let ledger = CompletionLedger()
        let codes = Locked([TransportError.Code]())
        let tag = Arrivals.tag()
        for index in 0..<count {
            transport.send(HTTPRequest(url: server.url("slow/20000?tag=\(tag)"))) { result in
                codes.withLock { $0.append(result.error?.code ?? .other) }
                ledger.record(index)
            }
        }
        // As many in flight as the transport has connections to the host (the rest wait in
        // its queue): the server holds them.
        await Arrivals.shared.wait(for: tag, count: CurlTransport.Configuration(proxy: .none).connectionPool.maxConnectionsPerHost ?? count)
        let started = ContinuousClock.now
        transport.shutdown()
        #expect(ContinuousClock.now - started < .seconds(8))
        #expect(ledger.total == count, "shutdown returns after every completion ran")
        #expect(codes.withLock { $0 }.allSatisfy { $0 == .cancelled })

        // Afterwards: refused at once, and a second shutdown is harmless.
        let late = await sendWithCompletion(transport, HTTPRequest(url: server.url("bytes/1")))
        #expect(late.error?.code == .transportShutDown)
        transport.shutdown()
        #expect(ledger.anomalies(expecting: count).isEmpty)
    }

    @Test func shutdownFromACompletionHandlerDoesNotDeadlock() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        let done = Collected<Void>()
        transport.send(HTTPRequest(url: server.url("bytes/1")), completion: { _ in
            transport.shutdown()
            done.append(())
        })
        _ = await done.wait(count: 1)
        transport.shutdown()
    }

    @Test func releasingATransportCancelsWhatItHadInFlight() async throws {
        let server = try await TestServers.shared().plain
        let ledger = CompletionLedger()
        let codes = Locked([TransportError.Code]())
        let handle: any CancellableTransfer
        do {
            let transport = makeTransport()
            let tag = Arrivals.tag()
            handle = transport.send(HTTPRequest(url: server.url("slow/20000?tag=\(tag)"))) { result in
                codes.withLock { $0.append(result.error?.code ?? .other) }
                ledger.record(0)
            }
            await Arrivals.shared.wait(for: tag)
        }
        await ledger.wait(total: 1)
        #expect(codes.withLock { $0 } == [.cancelled])
        // The handle outlives its transport: cancelling it now is harmless, and nothing more
        // is heard. No wait is needed: the loop is shut down, so a cancellation can queue
        // nothing for later, and whatever it did would have happened by the time it returns.
        handle.cancel()
        handle.cancel()
        #expect(ledger.anomalies(expecting: 1).isEmpty)
        #expect(codes.withLock { $0 } == [.cancelled])
    }

    @Test func theSharedTransportCannotBeShutDown() async throws {
        let server = try await TestServers.shared().plain
        CurlTransport.shared.shutdown()
        let response = try await CurlTransport.shared.send(HTTPRequest(url: server.url("bytes/3")))
        #expect(response.body.count == 3)
    }
}

/// The transport error code a task ended with, or `nil` if it succeeded or failed otherwise.
private func cancellationCode(_ result: Result<HTTPResponse, any Error>) -> TransportError.Code? {
    guard case .failure(let error) = result else { return nil }
    return (error as? TransportError)?.code
}
