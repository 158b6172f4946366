@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("CurlTransport: its task executor")
struct CurlTransportExecutorTests {
    @Test func tasksPreferringTheTransportRunOnItsThread() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let threadNames = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<50 {
                group.addTask(executorPreference: transport.taskExecutor) {
                    let payload = Data("executor \(index)".utf8)
                    let response = try await transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .bytes(payload)))
                    #expect(response.body == payload)
                    return currentThreadName()
                }
            }
            var names = Set<String>()
            for try await name in group { names.insert(name) }
            return names
        }
        #expect(threadNames == ["aif-curl"])
    }

    @Test func tasksPreferringAShutDownTransportStillRun() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        transport.shutdown()
        let task = Task(executorPreference: transport.taskExecutor) {
            try await transport.send(HTTPRequest(url: server.url("bytes/1")))
        }
        let result = await task.result
        guard case .failure(let error) = result else {
            Issue.record("expected the request to fail after shutdown")
            return
        }
        #expect((error as? TransportError)?.code == .transportShutDown)
    }

    @Test func anExchangeHandsItsOutcomeOverAsEachTransferEndsUnlessTheExecutorTakesBatches() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        // One by one, from the transport's thread: the load executor's way.
        let oneByOne = ThreadNotingExecutor(takesWorkInBatches: false)
        #expect(try await exchanges(16, of: server.url("bytes/8"), through: transport, completingOn: oneByOne) == Array(repeating: 200, count: 16))
        #expect(oneByOne.threadNames == Array(repeating: "aif-curl", count: 16))
        // In batches, from a Dispatch block: a task's way.
        let inBatches = ThreadNotingExecutor(takesWorkInBatches: true)
        #expect(try await exchanges(16, of: server.url("bytes/8"), through: transport, completingOn: inBatches) == Array(repeating: 200, count: 16))
        #expect(inBatches.threadNames.count == 16)
        #expect(!inBatches.threadNames.contains("aif-curl"))
        // Asked for on the transport's thread (a task preferring it), there is no other thread to go to.
        let onTheLoop = ThreadNotingExecutor(takesWorkInBatches: true)
        let statusCodes = try await Task(executorPreference: transport.taskExecutor) {
            try await exchanges(4, of: server.url("bytes/8"), through: transport, completingOn: onTheLoop)
        }.value
        #expect(statusCodes == Array(repeating: 200, count: 4))
        #expect(onTheLoop.threadNames == Array(repeating: "aif-curl", count: 4))
    }
}

/// Sends `count` exchanges one after another from the calling task (where it runs) and returns
/// their status codes, each outcome handed over through `executor`.
private func exchanges(_ count: Int, of url: URL, through transport: CurlTransport, completingOn executor: ThreadNotingExecutor) async throws -> [Int] {
    var outcomes: [Result<HTTPResponse, TransportError>] = []
    for _ in 0..<count {
        outcomes.append(await withUnsafeContinuation { continuation in
            _ = transport.exchange(HTTPRequest(url: url), progress: nil, completingOn: executor) { continuation.resume(returning: $0) }
        })
    }
    return try outcomes.map { try $0.get().statusCode }
}

/// Runs the work handed to it at once, where it is handed over, noting the thread's name.
private final class ThreadNotingExecutor: StepExecutor {
    let takesWorkInBatches: Bool
    private let names = Locked<[String]>([])

    init(takesWorkInBatches: Bool) {
        self.takesWorkInBatches = takesWorkInBatches
    }

    func run(_ work: @escaping @Sendable () -> Void) {
        names.withLock { $0.append(currentThreadName()) }
        work()
    }

    var threadNames: [String] { names.withLock { $0 } }
}

/// The kernel's name for the thread running the caller (a synchronous function, so async code
/// may ask).
private func currentThreadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines)
}
