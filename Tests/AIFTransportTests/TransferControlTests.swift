@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

/// Measures a transfer's steady rate from its progress reports: bytes per second from the
/// first report past `from` bytes (the rate limit's initial burst spent, the connection made)
/// to the last — so a busy machine's slow start does not count.
private final class RateProbe: Sendable {
    private let reports = Locked<[(ContinuousClock.Instant, Int64)]>([])
    private let from: Int64

    init(from: Int64 = 64 << 10) {
        self.from = from
    }

    func record(_ bytes: Int64) {
        let now = ContinuousClock.now
        reports.withLock { reports in
            if reports.last?.1 != bytes { reports.append((now, bytes)) }
        }
    }

    var bytesPerSecond: Double {
        let reports = reports.withLock { $0 }
        guard let first = reports.first(where: { $0.1 >= from }), let last = reports.last, last.0 > first.0 else { return 0 }
        return Double(last.1 - first.1) / ((last.0 - first.0) / .seconds(1))
    }
}

@Suite("Transfer control: suspend, resume, rate limits", .timeLimit(.minutes(2)))
struct TransferControlTests {
    private static let transport = CurlTransport(configuration: .init(proxy: .none))

    /// A server of `count` random bytes; the request for them.
    private func serve(_ count: Int) throws -> (RawServer, [UInt8], HTTPRequest) {
        let content = Digest.randomBytes(count)
        let server = try RawServer(.resource(RangedResource(.init(content: content))))
        return (server, content, HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/file.bin")!))
    }

    /// Whether the transport stopped the control's transfer receiving (`false`: the test was
    /// cancelled first).
    private func stopsReceiving(_ control: TransferControl) async -> Bool {
        await event { tell in control.whenReceivingStops { tell(()) } } != nil
    }

    /// Runs a transfer of its own on the shared transport's loop from start to end: many turns
    /// of the loop in which a suspended transfer must receive nothing.
    private func runAnotherTransferToItsEnd() async throws {
        let (server, content, request) = try serve(1 << 20)
        defer { server.stop() }
        #expect(try await Self.transport.send(request).body == Data(content))
    }

    @Test func aRateLimitPacesTheDownload() async throws {
        let (server, content, plain) = try serve(768 << 10)
        defer { server.stop() }
        var request = plain
        request.control = TransferControl(maxBytesPerSecond: 384 << 10)
        let probe = RateProbe()
        let response = try await Self.transport.send(request) { probe.record($0.bytesReceived) }
        #expect(response.body == Data(content))
        let rate = probe.bytesPerSecond / Double(384 << 10)
        #expect(rate > 0.8 && rate < 1.2, "\(rate) times the limit")
    }

    @Test func aRateLimitPacesTheUpload() async throws {
        let server = try await TestServers.shared().plain
        let body = Data(Digest.randomBytes(512 << 10))
        var request = HTTPRequest(method: .post, url: server.url("digest"), body: .bytes(body))
        request.control = TransferControl(maxBytesPerSecond: 256 << 10)
        let probe = RateProbe()
        let response = try await Self.transport.send(request) { probe.record($0.bytesSent) }
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("\(body.count) \(Digest.hex(Digest.hash(body))) "))
        let rate = probe.bytesPerSecond / Double(256 << 10)
        #expect(rate > 0.8 && rate < 1.2, "\(rate) times the limit")
    }

    @Test func aChangedLimitTakesEffectMidTransfer() async throws {
        let (server, content, plain) = try serve(2 << 20)
        defer { server.stop() }
        let control = TransferControl(maxBytesPerSecond: 128 << 10)
        var request = plain
        request.control = control
        let received = Collected<Int64>()
        let start = ContinuousClock.now
        async let response = Self.transport.send(request) { progress in received.append(progress.bytesReceived) }
        #expect(await received.first { $0 >= 64 << 10 } != nil)
        control.limit(toBytesPerSecond: nil)
        #expect(try await response.body == Data(content))
        // Half a second at 128 KiB/s, then well under a second unlimited; the rest at 128 KiB/s
        // would take 15 s.
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func aSuspendedTransferReceivesNothingUntilResumed() async throws {
        let (server, content, plain) = try serve(4 << 20)
        defer { server.stop() }
        let control = TransferControl(maxBytesPerSecond: 1 << 20)   // slow enough to catch mid-way
        var request = plain
        request.control = control
        // Streamed, with room for the whole body and nobody reading: the buffer holds exactly
        // what the transport took from libcurl. (libcurl's progress reports are no measure:
        // they can come after the pause and count bytes read before it.)
        let response = try await Self.transport.stream(request, bufferLimit: 8 << 20)
        let buffer = response.body.buffer
        control.suspend()
        #expect(control.isSuspended)
        #expect(await stopsReceiving(control))
        let atSuspension = buffer.bufferedBytes
        try await runAnotherTransferToItsEnd()
        #expect(buffer.bufferedBytes == atSuspension, "bytes arrived while suspended")
        #expect(atSuspension < content.count)
        control.resume()
        control.limit(toBytesPerSecond: nil)
        var body = Data(capacity: content.count)
        for try await chunk in response.body { body.append(chunk) }
        #expect(body == Data(content))
    }

    @Test func aTransferSuspendedBeforeItStartsStopsAtItsFirstBytes() async throws {
        let (server, content, plain) = try serve(1 << 20)
        defer { server.stop() }
        let control = TransferControl()
        control.suspend()
        var request = plain
        request.control = control
        let received = Collected<Int64>()
        let ended = Locked(false)
        let task = Task {
            defer { ended.withLock { $0 = true } }
            return try await Self.transport.send(request) { progress in received.append(progress.bytesReceived) }
        }
        // libcurl reads one buffer (and counts it) before the body callback can refuse it; then
        // nothing, while the loop runs another transfer to its end. Its progress reports may
        // come late, so what is checked is their largest: never more than that first buffer.
        #expect(await received.first { $0 > 0 } != nil)
        #expect(await stopsReceiving(control))
        try await runAnotherTransferToItsEnd()
        #expect(received.values.max() ?? 0 <= 64 << 10, "\(received.values.max() ?? 0) bytes received while suspended")
        #expect(!ended.withLock { $0 })
        control.resume()
        let response = try await task.value
        #expect(response.body == Data(content))
    }

    @Test func cancellingASuspendedTransferEndsItOnce() async throws {
        let (server, _, plain) = try serve(4 << 20)
        defer { server.stop() }
        // A transport of the test's own: its shutdown returns once every completion it will
        // ever run has run, so a second one would be counted by then.
        let transport = CurlTransport(configuration: .init(proxy: .none))
        let control = TransferControl(maxBytesPerSecond: 256 << 10)
        var request = plain
        request.control = control
        let outcomes = Collected<Result<HTTPResponse, TransportError>>()
        let progress = Collected<Int64>()
        let handle = transport.send(request, progress: { progress.append($0.bytesReceived) }) { outcomes.append($0) }
        _ = await progress.wait(count: 1)
        control.suspend()
        #expect(await stopsReceiving(control))   // a real pause, cancelled
        handle.cancel()
        _ = await outcomes.wait(count: 1)
        transport.shutdown()
        let all = outcomes.values
        #expect(all.count == 1)
        if case .failure(let error)? = all.first { #expect(error.code == .cancelled) } else { Issue.record("not cancelled: \(all)") }
        control.resume()   // after the end: nothing happens
    }

    @Test func aControlCarriesOverToTheNextRequest() async throws {
        // A resumed download's second attempt keeps the control's rate.
        let content = Digest.randomBytes(640 << 10)
        let resource = RangedResource(.init(content: content, cutNextAfter: 128 << 10))
        let server = try RawServer(.resource(resource))
        defer { server.stop() }
        let folder = try makeTestFolder("control")
        defer { try? FileManager.default.removeItem(at: folder) }
        var request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/file.bin")!)
        request.control = TransferControl(maxBytesPerSecond: 256 << 10)
        let target = FileDownload(to: folder.appending(path: "file.bin"))
        await #expect(throws: FileDownload.Failure.self) { try await Self.transport.download(request, to: target) }
        let probe = RateProbe(from: 192 << 10)   // whole-file bytes: 128 KiB kept, then 64 KiB
        let file = try await Self.transport.download(request, to: target) { probe.record($0.bytesReceived) }
        #expect(file.resumedAt == 128 << 10)
        #expect(try Data(contentsOf: file.url) == Data(content))
        let rate = probe.bytesPerSecond / Double(256 << 10)
        #expect(rate > 0.8 && rate < 1.2, "\(rate) times the limit")
    }
}
