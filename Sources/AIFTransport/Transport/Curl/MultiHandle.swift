import CCurl

/// One libcurl multi handle of an event loop, with what the loop keeps for it: when libcurl next
/// wants its timeout, how many transfers it holds, and the size of its connection cache.
///
/// A loop drives up to ``HostSlots/multiHandleCount`` of these from its one thread and epoll set.
/// libcurl 7.88 keeps one connection pool per multi handle and walks every connection in it for
/// each request (to find an idle one, and again in `curl_multi_remove_handle`), so a request
/// costs in proportion to the connections of its multi handle; with a few hundred transfers in
/// each instead of thousands in one, that cost stays flat (`Benchmarks/history/notes.md`). Which
/// transfer goes to which handle is ``HostSlots``' decision: one origin's transfers stay in one
/// handle up to a few hundred connections, so that they reuse each other's connections.
///
/// Used on the event loop's thread alone.
final class MultiHandle {
    let raw: UnsafeMutableRawPointer
    /// Its place in the loop's list, which sockets record to find their handle again.
    let index: Int
    /// The loop, for libcurl's socket callback. `unowned(unsafe)`: the loop owns this handle and
    /// cleans it up (``cleanUp()``) before it goes, so no callback can outlive it.
    unowned(unsafe) let loop: CurlEventLoop
    /// When libcurl next wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` on this handle, in
    /// ``TransferSteering/now()`` nanoseconds (0: at once); `nil` when it has asked for none.
    var timeoutDeadline: UInt64?
    /// Transfers in this handle.
    var running = 0
    /// Idle connections libcurl keeps for reuse (`CURLMOPT_MAXCONNECTS`).
    private(set) var connectionCacheSize: Int

    /// Makes a multi handle with the transport's limits, or `nil` when libcurl cannot allocate one.
    ///
    /// - Parameter perHost: libcurl's own limit of connections to one host in this handle, a
    ///   backstop under ``HostSlots``, which never lets more transfers in.
    init?(index: Int, loop: CurlEventLoop, perHost: Int?, options: PreparedOptions) {
        let openBefore = InheritableDescriptors.open()
        guard let raw = curl_multi_init() else { return nil }
        // libcurl 7.88 makes a socket pair for `curl_multi_wakeup` in every multi handle without
        // close-on-exec: each child process the application starts would inherit it. The loop
        // wakes through its own eventfd and never uses the pair.
        InheritableDescriptors.closeOnExec(socketsOpenedSince: openBefore)
        self.raw = raw
        self.index = index
        self.loop = loop
        let configuration = options.configuration
        _ = aif_curl_multi_setopt_long(raw, CURLMOPT_PIPELINING, aif_curlpipe_multiplex)
        if let perHost, perHost > 0 {
            _ = aif_curl_multi_setopt_long(raw, CURLMOPT_MAX_HOST_CONNECTIONS, perHost)
        }
        // With a total cap the loop has one multi handle (``HostSlots/multiHandleCount``), so
        // libcurl's cap is the transport's.
        if let total = configuration.connectionPool.maxConnections, total > 0 {
            _ = aif_curl_multi_setopt_long(raw, CURLMOPT_MAX_TOTAL_CONNECTIONS, total)
        }
        _ = aif_curl_multi_setopt_long(raw, CURLMOPT_MAX_CONCURRENT_STREAMS, max(1, configuration.limits.maxConcurrentStreamsPerConnection))
        connectionCacheSize = configuration.connectionPool.connectionCacheSize ?? 16
        _ = aif_curl_multi_setopt_long(raw, CURLMOPT_MAXCONNECTS, connectionCacheSize)

        // The socket API's two callbacks reach this handle through their user data, which stays
        // valid until ``cleanUp()``.
        let opaqueSelf = Unmanaged.passUnretained(self).toOpaque()
        _ = aif_curl_multi_setopt_socket_callback(raw, curlWatchSocket)
        _ = aif_curl_multi_setopt_pointer(raw, CURLMOPT_SOCKETDATA, opaqueSelf)
        _ = aif_curl_multi_setopt_timer_callback(raw, curlScheduleTimeout)
        _ = aif_curl_multi_setopt_pointer(raw, CURLMOPT_TIMERDATA, opaqueSelf)
    }

    /// libcurl's request (from ``curlScheduleTimeout``) to be called back after `milliseconds`
    /// (0: as soon as possible), or, with -1, not at all.
    func scheduleTimeout(in milliseconds: Int) {
        switch milliseconds {
        case ..<0: timeoutDeadline = nil
        // The usual request (a transfer just added, paused or unpaused), which needs no clock.
        case 0: timeoutDeadline = 0
        default: timeoutDeadline = TransferSteering.now() + UInt64(milliseconds) * 1_000_000
        }
    }

    /// Gives libcurl its timeout if it is due at `now` (read only when needed): libcurl runs the
    /// transfers whose time has come (connect and idle limits, retries of a resolve, transfers
    /// just added or unpaused).
    func actOnExpiredTimeout() {
        guard let deadline = timeoutDeadline, deadline == 0 || deadline <= TransferSteering.now() else { return }
        timeoutDeadline = nil
        var stillRunning: Int32 = 0
        _ = curl_multi_socket_action(raw, aif_curl_socket_timeout, 0, &stillRunning)
        // libcurl calls the timer callback only when its next deadline changes. Woken a fraction
        // of a millisecond early (it rounds down what it asks for), it runs nothing and the
        // deadline stands, with no new call: ask for it, or the timeout would be lost.
        if timeoutDeadline == nil {
            var milliseconds = -1
            if curl_multi_timeout(raw, &milliseconds) == CURLM_OK, milliseconds >= 0 {
                scheduleTimeout(in: milliseconds)
            }
        }
    }

    /// Hands libcurl a socket epoll reported ready.
    func act(on socket: Int32, readiness: Int32) {
        var stillRunning: Int32 = 0
        _ = curl_multi_socket_action(raw, socket, readiness, &stillRunning)
    }

    /// Sizes the connection cache to the most transfers this handle has held at once (doubling,
    /// at most `cap`), so that connections a steady load keeps needing are not closed when their
    /// transfers end. Only for a cache the configuration leaves automatic.
    func growConnectionCacheIfNeeded(cap: Int?) {
        guard running > connectionCacheSize else { return }
        var size = connectionCacheSize
        while size < running { size *= 2 }
        if let cap, cap > 0 { size = min(size, max(cap, 16)) }
        guard size != connectionCacheSize else { return }
        connectionCacheSize = size
        _ = aif_curl_multi_setopt_long(raw, CURLMOPT_MAXCONNECTS, size)
    }

    /// Frees the handle; its transfers must have been removed.
    func cleanUp() {
        curl_multi_cleanup(raw)
    }
}

/// CURLMOPT_SOCKETFUNCTION: libcurl asks the loop (through the multi handle, its user data) to
/// watch a socket, or to stop.
private func curlWatchSocket(
    _ easy: UnsafeMutableRawPointer, _ socket: curl_socket_t, _ what: Int32, _ multi: UnsafeMutableRawPointer?, _ socketData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let multi else { return 0 }
    let handle = Unmanaged<MultiHandle>.fromOpaque(multi).takeUnretainedValue()
    handle.loop.watch(socket, for: what, from: handle)
    return 0
}

/// CURLMOPT_TIMERFUNCTION: libcurl tells the multi handle (its user data) when to call it back.
private func curlScheduleTimeout(_ raw: UnsafeMutableRawPointer, _ milliseconds: Int, _ multi: UnsafeMutableRawPointer?) -> Int32 {
    guard let multi else { return 0 }
    Unmanaged<MultiHandle>.fromOpaque(multi).takeUnretainedValue().scheduleTimeout(in: milliseconds)
    return 0
}
