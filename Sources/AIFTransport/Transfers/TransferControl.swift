/// Steers a request's transfer from any thread while it runs: suspends and resumes it, and
/// limits its rate.
///
/// ```swift
/// let control = TransferControl(maxBytesPerSecond: 512 << 10)   // 512 KiB/s each way
/// var request = HTTPRequest(url: isoURL)
/// request.control = control
/// async let file = CurlTransport.shared.download(request, to: FileDownload(to: destination))
/// control.suspend()          // the transfer stops reading and writing; its connection stays
/// control.resume()
/// control.limit(toBytesPerSecond: nil)                           // full speed from now on
/// ```
///
/// Set it on ``HTTPRequest/control``, one request at a time. It follows the request through
/// redirect hops, and a later request that carries it (a retry, a resumed download) picks up
/// its state. A transfer suspended before it starts sends its request (and a body's first
/// bytes, if it has one), and stops at the first bytes of the answer's body, which libcurl
/// holds until it is resumed. A ``CurlTransport`` honours the control with `curl_easy_pause`;
/// another transport may ignore it. A multipart form's upload is not paced (libcurl reads
/// the form itself); it is suspended with the rest.
///
/// While suspended, a transfer's idle timeout does not run (libcurl skips the speed check of
/// a paused transfer), but its total timeout does, and the server may close a connection left
/// idle too long: suspend for seconds or minutes, not hours. The rate limit paces each
/// direction on its own with a token bucket refilled continuously (bursts of at most a tenth
/// of a second's worth, and at least 16 KiB); it is kept within a few percent over a second
/// or more, counting body bytes only.
public final class TransferControl: Sendable {
    private struct State {
        var suspended = false
        /// A reader of the response body has fallen behind (``HTTPResponse/Streaming/Body``).
        var held = false
        /// The number of the stream buffer's last decision to hold or let go (``setHeld(_:change:)``).
        var holdChange = 0
        var maxBytesPerSecond: Int?
        /// Bumped at each change of the rate, so the transfer restarts its pacing.
        var rateGeneration = 0
        var binding: Binding?
        /// The transport has stopped the transfer receiving because it is suspended or held.
        var receivingStopped = false
        var onReceivingStopped: [@Sendable () -> Void] = []

        var settings: Settings {
            Settings(suspended: suspended, held: held, maxBytesPerSecond: maxBytesPerSecond, rateGeneration: rateGeneration)
        }
    }

    private struct Binding {
        weak var loop: CurlEventLoop?
        let transfer: Transfer
    }

    /// What the transfer must do, as the loop reads it.
    struct Settings: Equatable {
        var suspended = false
        var held = false
        var maxBytesPerSecond: Int?
        var rateGeneration = 0
    }

    private let state: Locked<State>
    /// Whether a stream made the control for its reader's back-pressure alone (the caller gave
    /// none): nothing suspends or paces the transfer's sending, so a small request body may go
    /// with the head.
    let holdsOnlyForAReader: Bool

    /// Creates a control for one request (or for the successive requests of one download).
    ///
    /// - Parameter maxBytesPerSecond: The most body bytes a second in each direction, or `nil`
    ///   (the default) for no limit.
    public init(maxBytesPerSecond: Int? = nil) {
        state = Locked(State(maxBytesPerSecond: maxBytesPerSecond.map { max(1, $0) }))
        holdsOnlyForAReader = false
    }

    private init(holdingOnlyForAReader: Void) {
        state = Locked(State())
        holdsOnlyForAReader = true
    }

    /// A control a stream makes for its own reader's back-pressure, when the caller gave none.
    package static func forStreamReader() -> TransferControl {
        TransferControl(holdingOnlyForAReader: ())
    }

    /// Stops the transfer sending and receiving until ``resume()``; harmless when suspended.
    public func suspend() {
        change { $0.suspended = true }
    }

    /// Lets a suspended transfer go on; harmless when it runs.
    public func resume() {
        change { $0.suspended = false }
    }

    /// Whether ``suspend()`` was called last (rather than ``resume()``).
    public var isSuspended: Bool {
        state.withLock { $0.suspended }
    }

    /// The rate limit in force, in bytes a second each way, or `nil` for none.
    public var maxBytesPerSecond: Int? {
        state.withLock { $0.maxBytesPerSecond }
    }

    /// Changes the rate limit, for the rest of the transfer.
    ///
    /// - Parameter bytesPerSecond: The most body bytes a second in each direction, or `nil`
    ///   for no limit.
    public func limit(toBytesPerSecond bytesPerSecond: Int?) {
        change {
            $0.maxBytesPerSecond = bytesPerSecond.map { max(1, $0) }
            $0.rateGeneration += 1
        }
    }

    // MARK: - The library's side

    /// Holds the transfer's receiving (its reader is behind), or lets it go on. `change` numbers
    /// the stream buffer's decisions in the order it made them, under its lock: one told late
    /// (a hold that lost the race to the release that answers it) changes nothing.
    func setHeld(_ held: Bool, change number: Int) {
        change { state in
            guard number > state.holdChange else { return }
            state.holdChange = number
            state.held = held
        }
    }

    private func change(_ body: (inout State) -> Void) {
        let binding = state.withLock { state -> Binding? in
            body(&state)
            return state.binding
        }
        if let binding { binding.loop?.steer(binding.transfer) }
    }

    /// Attaches the control to a transfer that has just started on `loop`; returns the
    /// settings to apply. Called on the loop's thread.
    func bind(_ transfer: Transfer, on loop: CurlEventLoop) -> Settings {
        state.withLock { state in
            state.binding = Binding(loop: loop, transfer: transfer)
            return state.settings
        }
    }

    /// Detaches the control from a transfer that ended (if still attached to it).
    func unbind(_ transfer: Transfer) {
        state.withLock { state in
            guard state.binding?.transfer === transfer else { return }
            state.binding = nil
            state.receivingStopped = false
        }
    }

    /// The transport's report, from the loop's thread: whether the transfer's receiving is
    /// stopped now because it is suspended or held (not for a rate limit's wait).
    func receivingStopped(_ stopped: Bool) {
        let waiting = state.withLock { state -> [@Sendable () -> Void] in
            state.receivingStopped = stopped
            guard stopped else { return [] }
            defer { state.onReceivingStopped = [] }
            return state.onReceivingStopped
        }
        for tell in waiting { tell() }
    }

    /// Calls `tell` once the transport has stopped the transfer receiving because it is
    /// suspended or held — at once if it has — on the transport's thread: the moment after
    /// which no byte arrives until it goes on, which a test awaits rather than a while.
    func whenReceivingStops(_ tell: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.receivingStopped { return true }
            state.onReceivingStopped.append(tell)
            return false
        }
        if now { tell() }
    }

    /// The settings now.
    var settings: Settings {
        state.withLock { $0.settings }
    }
}
