@testable import AIFTransport
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
}

/// The kernel's name for the thread running the caller (a synchronous function, so async code
/// may ask).
private func currentThreadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines)
}
