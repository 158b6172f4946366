/// Bridges a cancellation to a transfer that may not have been submitted yet when the
/// cancellation comes: Swift task cancellation (the async face), or the proxy's (a load driven
/// by completion handlers, whose successive steps — redirect hops, retries, the waits between
/// them — attach in turn).
///
/// Only the newest step is held. A step's transfer is attached after the call that starts it
/// returns, and its completion may run on another thread before that — and the load go on to
/// attach its next step (a retry's wait) first. So each step is numbered when it starts, and an
/// attachment never replaces a later step's: the late one belongs to a step that has ended.
package final class AsyncCancellation: CancellableTransfer {
    private struct State {
        /// The newest step's transfer, and its number.
        var attached: (step: Int, transfer: any CancellableTransfer)?
        /// Steps started so far.
        var started = 0
        var isCancelled = false
    }

    private let state = Locked(State())

    package init() {}

    /// Starts a step and attaches its transfer — unless a later step attached first, because
    /// this one ended before `start` returned. Cancels the transfer at once if the
    /// cancellation came first.
    ///
    /// - Parameter start: Starts the step and returns its handle.
    package func attach(_ start: () -> any CancellableTransfer) {
        let step = state.withLock { state in
            state.started += 1
            return state.started
        }
        attach(start(), as: step)
    }

    /// Attaches a step that has started already: one whose completion cannot run before this
    /// call (a wait not yet scheduled). Cancels it at once if the cancellation came first.
    package func attach(_ transfer: any CancellableTransfer) {
        attach { transfer }
    }

    /// Cancels the newest step's transfer, or remembers to cancel the next one attached.
    package func cancel() {
        let transfer = state.withLock { state -> (any CancellableTransfer)? in
            state.isCancelled = true
            defer { state.attached = nil }
            return state.attached?.transfer
        }
        transfer?.cancel()
    }

    private func attach(_ transfer: any CancellableTransfer, as step: Int) {
        let cancelNow = state.withLock { state in
            if state.isCancelled { return true }
            if step > state.attached?.step ?? 0 { state.attached = (step, transfer) }
            return false
        }
        if cancelNow { transfer.cancel() }
    }
}
