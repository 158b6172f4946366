import Dispatch

/// Where delegate-face loads do their work between the transport's I/O — signing, decoding,
/// validation, hooks, `.immediate` delivery — unless their proxy puts them on the transport's
/// thread: a concurrent Dispatch queue of the library's own, run by Dispatch's worker threads.
/// (An async-face load does its work in the task that awaits it, and hands a step here only
/// once that task has left: see ``AwaitingTaskExecutor``.)
///
/// A draining executor stood here before (one queue of the library's, a few workers each
/// running jobs one after another, the loads a batch of finished transfers resumed run by the
/// thread that resumed them). Measured against this queue in the benchmark's manager clients
/// (`TransportBench client`, alternating runs), it was the slower on both faces, at
/// concurrency 16 and 64; the figures are in `Benchmarks/history/notes.md`.
final class LoadExecutor: StepExecutor {
    /// The executor every proxy's loads use unless they run on the transport's thread.
    static let shared = LoadExecutor()

    private let queue = DispatchQueue(label: "AIFNetworking.loads", attributes: .concurrent)
    /// Set on the queue, so that a test can tell whether it runs there.
    private let marker = DispatchSpecificKey<Bool>()

    private init() {
        queue.setSpecific(key: marker, value: true)
    }

    func run(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Whether the current thread is running work of this executor.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: marker) ?? false
    }
}
