@testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("DrainingExecutor: the loads' executor")
struct DrainingExecutorTests {
    @Test func runsEveryJobOnItsOwnThreadsAndNeverMoreThanItsWidthAtOnce() async {
        let executor = DrainingExecutor(width: 2)
        let running = Locked((now: 0, most: 0, onExecutor: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask(executorPreference: executor) {
                    running.withLock { state in
                        state.now += 1
                        state.most = max(state.most, state.now)
                        if executor.isDrainingOnCurrentThread { state.onExecutor += 1 }
                    }
                    // Long enough for other drainers to start if the executor let them.
                    usleep(200)
                    running.withLock { $0.now -= 1 }
                }
            }
        }
        let state = running.withLock { $0 }
        #expect(state.onExecutor == 200)
        #expect(state.most >= 1 && state.most <= 2)
        #expect(await eventually { executor.isIdle })
    }

    @Test func aBatchRunsTheTasksItResumesOnItsOwnThreadBeforeItReturns() async throws {
        let executor = DrainingExecutor(width: 1)
        let waiting = Locked<[CheckedContinuation<Void, Never>]>([])
        let ranOn = Locked<[pthread_t]>([])
        let count = 20
        var tasks: [Task<Void, Never>] = []
        for _ in 0..<count {
            tasks.append(Task(executorPreference: executor) {
                await withCheckedContinuation { continuation in
                    waiting.withLock { $0.append(continuation) }
                }
                let thread = pthread_self()
                ranOn.withLock { $0.append(thread) }
            })
        }
        #expect(await eventually { waiting.withLock { $0.count } == count && executor.isIdle })
        // The batch, from a thread of its own, as the transport's completion block does it.
        let (batchThread, ranBeforeReturn) = await withCheckedContinuation { (done: CheckedContinuation<(pthread_t, Int), Never>) in
            Thread {
                let continuations = waiting.withLock { $0 }
                executor.runBatch {
                    for continuation in continuations { continuation.resume() }
                }
                done.resume(returning: (pthread_self(), ranOn.withLock { $0.count }))
            }.start()
        }
        for task in tasks { await task.value }
        #expect(ranBeforeReturn == count)
        #expect(ranOn.withLock { $0 }.allSatisfy { pthread_equal($0, batchThread) != 0 })
        #expect(executor.isIdle)
    }

    @Test func aQueueThatNeverEmptiesStaysBoundedAndReleasesWhatRanAtOnce() async {
        let executor = DrainingExecutor(width: 1)
        let total = 20_000
        let state = Locked((ran: 0, mostStored: 0))
        // Two chains of work, each link queueing the next: a link always waits, so the queue
        // does not empty until the end.
        @Sendable func link(_ remaining: Int) {
            executor.run {
                if remaining > 0 { link(remaining - 1) }
                let stored = executor.storedEntries
                state.withLock { state in
                    state.ran += 1
                    state.mostStored = max(state.mostStored, stored)
                }
            }
        }
        // Work lets go of what it captured as soon as it has run, busy queue or not: the work
        // queued right behind it finds it gone.
        final class Captured: Sendable {}
        let released = Locked(0)
        /// Queues work holding a new object; returns a weak reference to it. The object's
        /// only strong reference is the work's, from the moment this returns.
        @Sendable func queueWorkHoldingAnObject() -> WeakReference<Captured> {
            let captured = Captured()
            executor.run { withExtendedLifetime(captured) {} }
            return WeakReference(captured)
        }
        @Sendable func watched() {
            let reference = queueWorkHoldingAnObject()
            executor.run { if reference.object == nil { released.withLock { $0 += 1 } } }
        }
        link(total / 2 - 1)
        link(total / 2 - 1)
        for _ in 0..<100 { watched() }
        #expect(await eventually(timeout: .seconds(30)) { state.withLock { $0.ran } == total && executor.isIdle })
        let mostStored = state.withLock { $0.mostStored }
        #expect(mostStored <= 2100, "the queue held \(mostStored) entries")
        #expect(released.withLock { $0 } == 100)
        #expect(executor.storedEntries == 0)
    }

    @Test func jobsQueuedWhileABatchIsOpenStillRunWhenItQueuesNothing() async {
        let executor = DrainingExecutor(width: 1)
        let ran = Locked(false)
        let started = Locked(false)
        // A batch held open on another thread while a task is started: the task's first job is
        // queued without a drainer and must be run when the batch closes.
        let release = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        Thread {
            executor.runBatch {
                started.withLock { $0 = true }
                release.wait()
            }
            closed.signal()
        }.start()
        #expect(await eventually { started.withLock { $0 } })
        let task = Task(executorPreference: executor) { ran.withLock { $0 = true } }
        release.signal()
        await task.value
        #expect(ran.withLock { $0 })
        closed.wait()
        #expect(await eventually { executor.isIdle })
    }
}
