public import Dispatch

/// Where a manager calls its delegate and its perform hooks.
///
/// The default, ``mainActor``, suits programs whose main actor runs: apps, and command-line
/// programs with an `async` entry point (`@main` with `static func main() async`), whose main
/// actor keeps running while `main` awaits — no run loop needed. A program that blocks its main
/// thread, or a server, chooses ``queue(_:)``, ``actor(_:)`` or ``immediate``.
public enum CallbackExecutor: Sendable {
    /// On the main actor, in the order loads end.
    case mainActor
    /// On a dispatch queue; with a serial queue, in the order loads end.
    case queue(DispatchQueue)
    /// Isolated to an actor (each delivery is a task of its own, so loads ending close together
    /// may be told in either order).
    case actor(any Actor)
    /// On whichever thread ended the load, before `loadData` callers hear anything else: the
    /// cheapest, for servers and benchmarks whose delegates are thread-safe.
    case immediate

    /// Runs `body` on this executor.
    func run(_ body: @escaping @Sendable () -> Void) {
        switch self {
        case .mainActor:
            // The main queue is the main actor's executor: FIFO, unlike separate tasks.
            DispatchQueue.main.async(execute: body)
        case .queue(let queue):
            queue.async(execute: body)
        case .actor(let actor):
            Task { await Self.run(body, isolatedTo: actor) }
        case .immediate:
            body()
        }
    }

    private static func run(_ body: @Sendable () -> Void, isolatedTo actor: isolated any Actor) {
        body()
    }
}
