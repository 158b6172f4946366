@testable import AIFTransport
import Foundation
import Testing

/// The buffer between the transport's thread and a stream's reader, driven by hand: bursts of
/// pieces gathered into chunks, a waiting reader woken once a burst, holds in order. No socket,
/// no clock.
@Suite("A stream's buffer: bursts gathered into chunks, holds told in order")
struct StreamBufferTests {
    private static let piece = 16 << 10

    private static func bytes(_ count: Int, _ value: UInt8) -> [UInt8] { [UInt8](repeating: value, count: count) }

    private static func append(_ bytes: [UInt8], to buffer: StreamBuffer) {
        bytes.withUnsafeBytes { buffer.append($0) }
    }

    private static func chunks(of buffer: StreamBuffer) async throws -> [Data] {
        var chunks: [Data] = []
        while let chunk = try await buffer.next(cancelling: StreamLifetime()) { chunks.append(chunk) }
        return chunks
    }

    @Test func aWaitingReaderIsWokenOnceABurstWithAllOfIt() async {
        let buffer = StreamBuffer(limit: 1 << 20, control: .forStreamReader(), url: "test")
        let first = Self.bytes(Self.piece, 1) + Self.bytes(Self.piece, 2) + Self.bytes(100, 3)
        let result: Result<Data?, TransportError> = await withUnsafeContinuation { continuation in
            #expect(buffer.take(orWaitWith: continuation) == nil)
            #expect(buffer.readerIsWaiting)
            Self.append(Array(first[..<Self.piece]), to: buffer)
            Self.append(Array(first[Self.piece..<(2 * Self.piece)]), to: buffer)
            Self.append(Array(first[(2 * Self.piece)...]), to: buffer)
            // Three pieces, and the reader still waits: they are one burst.
            #expect(buffer.readerIsWaiting)
            #expect(buffer.bufferedBytes == first.count)
            buffer.endOfBurst()
        }
        #expect((try? result.get()) == Data(first))
        #expect(!buffer.readerIsWaiting)
        #expect(buffer.bufferedBytes == 0)
    }

    @Test func eachBurstIsAChunkAndAFullChunkGoesAtOnce() async throws {
        let buffer = StreamBuffer(limit: 1 << 20, control: .forStreamReader(), url: "test")
        Self.append(Self.bytes(Self.piece, 1), to: buffer)
        Self.append(Self.bytes(Self.piece, 2), to: buffer)
        buffer.endOfBurst()
        Self.append(Self.bytes(10, 3), to: buffer)
        buffer.endOfBurst()
        buffer.endOfBurst()   // a turn without bytes changes nothing
        // A burst longer than a chunk: full chunks, then the rest at the burst's end.
        for value in 4..<9 { Self.append(Self.bytes(Self.piece, UInt8(value)), to: buffer) }
        buffer.endOfBurst()
        buffer.finish(.success(()))
        let chunks = try await Self.chunks(of: buffer)
        #expect(chunks.map(\.count) == [2 * Self.piece, 10, StreamBuffer.chunkCapacity, 5 * Self.piece - StreamBuffer.chunkCapacity])
        var expected: [UInt8] = []
        for value in 1..<9 { expected += Self.bytes(value == 3 ? 10 : Self.piece, UInt8(value)) }
        let received: [UInt8] = chunks.flatMap { [UInt8]($0) }
        #expect(received == expected)
    }

    @Test func aWaitingReaderGetsAChunkAsSoonAsItIsFull() async {
        let buffer = StreamBuffer(limit: 1 << 20, control: .forStreamReader(), url: "test")
        let result: Result<Data?, TransportError> = await withUnsafeContinuation { continuation in
            #expect(buffer.take(orWaitWith: continuation) == nil)
            for value in 0..<(StreamBuffer.chunkCapacity / Self.piece) { Self.append(Self.bytes(Self.piece, UInt8(value)), to: buffer) }
            #expect(!buffer.readerIsWaiting)
        }
        #expect((try? result.get())?.count == StreamBuffer.chunkCapacity)
    }

    @Test func aReaderWhoAsksMidBurstTakesWhatWasGathered() async throws {
        let buffer = StreamBuffer(limit: 1 << 20, control: .forStreamReader(), url: "test")
        Self.append(Self.bytes(300, 1), to: buffer)
        #expect(try await buffer.next(cancelling: StreamLifetime()) == Data(Self.bytes(300, 1)))
        Self.append(Self.bytes(200, 2), to: buffer)
        buffer.endOfBurst()
        #expect(try await buffer.next(cancelling: StreamLifetime()) == Data(Self.bytes(200, 2)))
        #expect(buffer.bufferedBytes == 0)
    }

    @Test func theEndComesAfterTheBytesGatheredBeforeIt() async throws {
        let buffer = StreamBuffer(limit: 1 << 20, control: .forStreamReader(), url: "test")
        Self.append(Self.bytes(500, 7), to: buffer)
        buffer.finish(.failure(TransportError(.connectionDropped, url: "test", detail: "cut")))
        buffer.finish(.success(()))   // the first end stands
        var iterator = HTTPResponse.Streaming.Body(buffer: buffer, lifetime: StreamLifetime()).makeAsyncIterator()
        #expect(try await iterator.next() == Data(Self.bytes(500, 7)))
        await #expect(throws: TransportError.self) { _ = try await iterator.next() }

        // A reader waiting when a body ends mid-burst gets the burst first, then the end.
        let waited = StreamBuffer(limit: 1 << 20, control: .forStreamReader(), url: "test")
        let result: Result<Data?, TransportError> = await withUnsafeContinuation { continuation in
            #expect(waited.take(orWaitWith: continuation) == nil)
            Self.append(Self.bytes(40, 8), to: waited)
            waited.finish(.success(()))
        }
        #expect((try? result.get()) == Data(Self.bytes(40, 8)))
        #expect(try await waited.next(cancelling: StreamLifetime()) == nil)
    }

    @Test func theTransferIsHeldAtTheLimitAndLetGoAtHalf() async throws {
        let control = TransferControl.forStreamReader()
        let buffer = StreamBuffer(limit: 4 * Self.piece, control: control, url: "test")
        for value in 0..<3 { Self.append(Self.bytes(Self.piece, UInt8(value)), to: buffer) }
        buffer.endOfBurst()
        #expect(!control.settings.held)
        Self.append(Self.bytes(Self.piece, 3), to: buffer)
        #expect(control.settings.held)
        Self.append(Self.bytes(Self.piece, 4), to: buffer)   // what arrives before the hold applies
        buffer.endOfBurst()
        // 80 KiB wait, in two bursts' chunks of 48 and 32 KiB; the hold goes once no more than
        // half the limit (32 KiB) waits.
        #expect(try await buffer.next(cancelling: StreamLifetime())?.count == 3 * Self.piece)
        #expect(!control.settings.held)
        #expect(buffer.bufferedBytes == 2 * Self.piece)
    }

    @Test func aHoldToldAfterTheReleaseThatAnsweredItChangesNothing() {
        // The buffer decides under its lock and tells the control after: the reader's release
        // (decision 2) can reach the control before the hold it answers (decision 1).
        let control = TransferControl.forStreamReader()
        control.setHeld(false, change: 2)
        control.setHeld(true, change: 1)
        #expect(!control.settings.held)
        control.setHeld(true, change: 3)
        #expect(control.settings.held)
        control.setHeld(false, change: 3)   // a decision is told once; a repeat is stale
        #expect(control.settings.held)
    }
}
