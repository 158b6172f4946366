@testable import AIFNetworking
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

    @Test func libcurlsTransferBuffersAreKeptAndReused() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let before = CurlMemory.transferBuffers.hits
        for index in 0..<20 {
            let payload = Data("buffer \(index)".utf8)
            let response = try await transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .bytes(payload)))
            #expect(response.body == payload)
        }
        // Each transfer after the first finds the buffer the one before gave back (or another
        // suite's): only libcurl allocating through these functions draws from the shelf.
        #expect(CurlMemory.transferBuffers.hits - before >= 19)
    }
}
