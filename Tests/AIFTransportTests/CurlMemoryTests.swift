@_spi(Performance) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("CurlMemory: libcurl's memory functions")
struct CurlMemoryTests {
    @Test func aShelfHandsBackTheBlocksItKeptAndOnlyThose() throws {
        let shelf = BlockShelf(blockSize: 16385, capacity: 4)
        #expect(shelf.take() == nil)
        let block = try #require(malloc(16385))
        #expect(shelf.put(block))
        #expect(shelf.count == 1)
        #expect(shelf.take() == block)
        #expect(shelf.hits == 1)
        // A block too small to serve, or much larger, is left for the caller to free.
        let small = try #require(malloc(100))
        let large = try #require(malloc(64 * 1024))
        #expect(!shelf.put(small))
        #expect(!shelf.put(large))
        free(small)
        free(large)
        free(block)
    }

    @Test func aShelfKeepsAtMostItsCapacity() throws {
        let shelf = BlockShelf(blockSize: 16385, capacity: 4)
        let blocks = try (0..<6).map { _ in try #require(malloc(16385)) }
        let kept = blocks.filter { shelf.put($0) }
        #expect(kept == Array(blocks.prefix(4)))
        for block in blocks.dropFirst(4) { free(block) }
        #expect(shelf.count == 4)
        // The rest are freed with the shelf.
    }

    /// By default the library leaves libcurl's memory functions alone: once a transport has
    /// initialised libcurl, opting in changes nothing and no transfer touches the shelf.
    @Test func theDefaultLeavesLibcurlsAllocatorAlone() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        _ = try await transport.send(HTTPRequest(url: server.url("bytes/10")))
        #expect(!CurlTransport.recycleLibcurlTransferBuffers())
        let before = CurlMemory.transferBuffers.hits
        for _ in 0..<5 { _ = try await transport.send(HTTPRequest(url: server.url("bytes/10"))) }
        #expect(CurlMemory.transferBuffers.hits == before)
    }

    /// A program that opts in first, in a process of its own, gets the recycling functions and
    /// working transfers.
    @Test func aProgramCanOptIn() async throws {
        let server = try await TestServers.shared().plain
        let output = try Shell.run("'\(helperPath)' recycle-buffers '\(server.url("bytes/100").absoluteString)'")
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "installed=true again=true bytes=2000")
    }
}
