import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The loop's side of a ``TransferControl``: which directions of one transfer are paused and
/// why, and the pacing of its rate limit. Lives on the event loop's thread only, made when a
/// transfer with a control starts.
///
/// A direction is paused while the control is suspended, while it waits for its rate's tokens,
/// and (receiving) while the body's reader is behind. libcurl pauses with `curl_easy_pause`,
/// which needs a connection: before there is one, the body callbacks refuse the first bytes
/// with libcurl's pause codes instead, which pauses the same way.
final class TransferSteering {
    private(set) var settings: TransferControl.Settings
    private var receiveBucket: TokenBucket?
    private var sendBucket: TokenBucket?
    /// When the rate limit lets a direction go on again, in monotonic nanoseconds.
    private var receiveWaitsUntil: UInt64?
    private var sendWaitsUntil: UInt64?
    /// The read callback found no bytes of a streamed body yet.
    private var sendWaitsForBody = false
    /// The `CURLPAUSE_*` bits libcurl has in force.
    private(set) var appliedMask: Int32 = 0
    /// The control told of where receiving stands, and what it was told last.
    private let control: TransferControl?
    private var toldReceivingStopped = false

    init(_ settings: TransferControl.Settings, control: TransferControl?) {
        self.settings = settings
        self.control = control
        resetBuckets()
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The `CURLPAUSE_*` bits the transfer should have now.
    var wantedMask: Int32 {
        var mask: Int32 = 0
        if settings.suspended || settings.held || receiveWaitsUntil != nil { mask |= aif_curlpause_recv }
        if settings.suspended || sendWaitsUntil != nil || sendWaitsForBody { mask |= aif_curlpause_send }
        return mask
    }

    /// The earliest moment a direction waiting for tokens may go on, if one waits.
    var wakeUpTime: UInt64? {
        switch (receiveWaitsUntil, sendWaitsUntil) {
        case (let receive?, let send?): min(receive, send)
        case (let receive?, nil): receive
        case (nil, let send?): send
        case (nil, nil): nil
        }
    }

    /// Takes new settings from the control; a changed rate starts its pacing afresh.
    func update(_ new: TransferControl.Settings) {
        let rateChanged = new.rateGeneration != settings.rateGeneration || new.maxBytesPerSecond != settings.maxBytesPerSecond
        settings = new
        if rateChanged {
            resetBuckets()
            receiveWaitsUntil = nil
            sendWaitsUntil = nil
        }
    }

    private func resetBuckets() {
        let now = Self.now()
        receiveBucket = settings.maxBytesPerSecond.map { TokenBucket(bytesPerSecond: $0, now: now) }
        sendBucket = receiveBucket
    }

    /// Ends the waits whose time has come; returns whether one did.
    func wakeUp(now: UInt64) -> Bool {
        var woke = false
        if let until = receiveWaitsUntil, until <= now {
            receiveWaitsUntil = nil
            woke = true
        }
        if let until = sendWaitsUntil, until <= now {
            sendWaitsUntil = nil
            woke = true
        }
        return woke
    }

    /// Counts body bytes received; starts a wait when they overdraw the rate.
    func received(_ count: Int) {
        guard var bucket = receiveBucket else { return }
        let now = Self.now()
        if let wait = bucket.take(count, now: now) { receiveWaitsUntil = now + wait }
        receiveBucket = bucket
    }

    /// How many body bytes may be sent now (`Int.max` without a limit; 0 starts a wait).
    func sendAllowance() -> Int {
        guard var bucket = sendBucket else { return Int.max }
        let now = Self.now()
        let allowance = bucket.available(now: now)
        sendBucket = bucket
        if allowance < 1 {
            sendWaitsUntil = now + bucket.waitForOneByte()
            return 0
        }
        return allowance
    }

    /// Counts body bytes sent.
    func sent(_ count: Int) {
        guard var bucket = sendBucket else { return }
        _ = bucket.take(count, now: Self.now())
        sendBucket = bucket
    }

    /// Makes libcurl's pause bits match ``wantedMask`` (once the transfer has a connection).
    func apply(to handle: EasyHandle) {
        defer { tellReceiving() }
        let wanted = wantedMask
        guard wanted != appliedMask else { return }
        let previous = appliedMask
        // Recorded first: unpausing may deliver held bytes at once, into callbacks that look.
        appliedMask = wanted
        if curl_easy_pause(handle.raw, wanted) != CURLE_OK {
            // No connection yet: the callbacks pause it when the first bytes come.
            appliedMask = previous
        }
    }

    /// The read callback found no bytes of a streamed body: sending waits for them.
    func waitForBody() {
        sendWaitsForBody = true
        appliedMask |= aif_curlpause_send
    }

    /// The body's producer has added bytes (or ended): sending may go on.
    func bodyMayHaveArrived() {
        sendWaitsForBody = false
    }

    /// A body callback refused bytes with libcurl's pause code: these bits are now in force.
    func pausedByCallback(_ bits: Int32) {
        appliedMask |= bits
        tellReceiving()
    }

    /// Tells the control when receiving stops, or goes on, for its suspension or hold.
    private func tellReceiving() {
        let stopped = appliedMask & aif_curlpause_recv != 0 && (settings.suspended || settings.held)
        guard stopped != toldReceivingStopped, let control else { return }
        toldReceivingStopped = stopped
        control.receivingStopped(stopped)
    }
}

/// A token bucket: `bytesPerSecond` tokens a second, at most `capacity` saved up.
struct TokenBucket {
    private let bytesPerSecond: Double
    private let capacity: Double
    private var tokens: Double
    private var last: UInt64

    init(bytesPerSecond: Int, now: UInt64) {
        self.bytesPerSecond = Double(bytesPerSecond)
        capacity = max(16_384, Double(bytesPerSecond) / 10)
        tokens = capacity
        last = now
    }

    private mutating func refill(now: UInt64) {
        guard now > last else { return }
        tokens = min(capacity, tokens + Double(now - last) / 1e9 * bytesPerSecond)
        last = now
    }

    /// Takes `count` tokens (the balance may go below zero); returns how long, in
    /// nanoseconds, until it is back to zero when it went below.
    mutating func take(_ count: Int, now: UInt64) -> UInt64? {
        refill(now: now)
        tokens -= Double(count)
        return tokens < 0 ? UInt64(-tokens / bytesPerSecond * 1e9) + 1 : nil
    }

    /// The whole tokens there are now.
    mutating func available(now: UInt64) -> Int {
        refill(now: now)
        return tokens < 1 ? 0 : Int(tokens)
    }

    /// Nanoseconds until the balance reaches one token.
    func waitForOneByte() -> UInt64 {
        UInt64(max(0, 1 - tokens) / bytesPerSecond * 1e9) + 1
    }
}
