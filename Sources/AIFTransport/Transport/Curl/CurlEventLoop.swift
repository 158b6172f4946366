import CCurl
import Dispatch
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif


/// Identifies the event-loop thread: each loop stores a pointer to itself in this key on its
/// own thread, so "am I on the loop?" is one `pthread_getspecific`.
private let loopThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

/// libcurl multi handles driven by one dedicated thread, through libcurl's socket API on epoll.
///
/// libcurl tells the loop which sockets to watch for what (``watch(_:for:from:)``) and when it
/// next needs to act on its own (``MultiHandle/scheduleTimeout(in:)``); the loop waits on those
/// sockets in an epoll set (``SocketPoller``) and hands each ready socket, or an expired timeout,
/// to `curl_multi_socket_action` of the handle it belongs to. A wake-up therefore costs in
/// proportion to the sockets that are ready, not to the transfers in flight; and since libcurl
/// walks every connection of a multi handle for each request, transfers beyond a few hundred go
/// to further handles (``HostSlots`` decides which, ``MultiHandle``), so that thousands of mostly
/// idle transfers cost little more per request than a few.
///
/// Other threads talk to the loop only through ``submit(_:)``, ``cancel(_:)`` and
/// ``shutdown(wait:)``, which queue a command under a lock and wake the loop through the poller's
/// eventfd (once per batch: a wake-up already pending is not repeated). Everything else — the
/// multi handle, the easy handles, the transfers' buffers, and every libcurl callback — lives on
/// the loop thread.
///
/// - Note: `@unchecked Sendable` is safe because the only state other threads touch is
///   `inbox`, behind its lock, and the poller's eventfd, which they only write to (a system call
///   safe from any thread; the loop closes the descriptor only after every such write, counted
///   in `wakersInFlight`); every other stored
///   property is used on the loop thread alone (or is immutable after `init`).
final class CurlEventLoop: @unchecked Sendable {
    private enum Command {
        case start(Transfer)
        case cancel(Transfer)
        /// A Swift concurrency job of a task that prefers this loop as its executor.
        case run(UnownedJob)
        /// Plain work of a load that runs on this loop (see ``StepExecutor``).
        case call(@Sendable () -> Void)
        /// A transfer's ``TransferControl`` changed.
        case steer(Transfer)
        case shutdown
    }

    private struct Inbox {
        var commands: [Command] = []
        /// The loop is in (or about to enter) its wait for sockets with an empty inbox: a new
        /// command must wake it. While it is not, it will look at the inbox before it polls
        /// again, and a wake-up would only cost a system call and a spurious poll cycle.
        var polling = false
        /// A wake-up has been signalled since the loop last drained the inbox.
        var wakeupPending = false
        /// The loop has stopped taking commands (or never started: see ``SocketPoller/failure``);
        /// the multi handle may be gone.
        var closed = false
    }

    private let options: PreparedOptions
    private let logger: Logger
    private let inbox = Locked(Inbox())
    private let exited = DispatchGroup()
    private let poller = SocketPoller()
    /// Threads that decided, under the inbox lock, to signal the eventfd and have not yet done
    /// so. Shutdown closes the inbox and then waits for this to reach zero before it closes
    /// the eventfd, whose number could otherwise be reused by then.
    private let wakersInFlight = Atomic<Int>(0)

    // Loop-thread state. `@exclusivity(unchecked)`: one thread uses these, and none of its
    // accesses overlap, so the runtime's dynamic exclusivity checks would only cost time.
    /// Commands the loop thread queued for itself (from inside a completion handler); they need
    /// neither the lock nor a wake-up.
    @exclusivity(unchecked) private var localCommands: [Command] = []
    @exclusivity(unchecked) private var drained: [Command] = []
    /// The transfers in the multi handles; each knows its index (``Transfer/runningIndex``).
    @exclusivity(unchecked) private var running: [Transfer] = []
    @exclusivity(unchecked) private var idleHandles: [EasyHandle] = []
    /// The running transfers that have a ``TransferControl`` (few, usually none).
    @exclusivity(unchecked) private var steered: [Transfer] = []
    /// Transfers whose heads came over HTTP/2 from an origin not yet known to multiplex, during
    /// the last `curl_multi_socket_action` (its callbacks may not add handles).
    @exclusivity(unchecked) private var answeredOverHTTP2: [Transfer] = []
    /// Transfers whose bodies' bytes reached a receiver that gathers them, since the loop last
    /// told them their bursts had ended.
    @exclusivity(unchecked) private var bursting: [Transfer] = []
    private let sharedHeaders: SharedHeaderLists
    private let automaticConnectionCache: Bool
    /// The multi handles by index (``HostSlots/multiHandle(of:)``), each made when first needed.
    @exclusivity(unchecked) private var multiHandles: [MultiHandle?]
    /// The multi handles made so far, for the loop's turns.
    @exclusivity(unchecked) private var activeMultiHandles: [MultiHandle] = []
    /// What the loop knows of each socket libcurl has asked it to watch, by descriptor number.
    @exclusivity(unchecked) private var sockets: [SocketState] = []
    /// The running transfers' total deadlines, which the loop keeps itself (see
    /// ``TransferDeadlines`` for why libcurl does not).
    @exclusivity(unchecked) private var deadlines = TransferDeadlines()
    /// Which transfers may be in libcurl now, host by host, and which wait for a free connection.
    @exclusivity(unchecked) private var slots: HostSlots

    init(configuration: CurlTransport.Configuration, threadName: String) {
        CurlGlobal.initialize()
        options = PreparedOptions(configuration)
        let pool = configuration.connectionPool
        // libcurl enforces a total connection cap, and a connection cache size, per multi handle:
        // with either set, the loop keeps to one.
        slots = HostSlots(
            perHost: pool.maxConnectionsPerHost,
            streamsPerConnection: configuration.limits.maxConcurrentStreamsPerConnection,
            oneMultiHandle: pool.maxConnections != nil || pool.connectionCacheSize != nil)
        multiHandles = Array(repeating: nil, count: slots.multiHandleCount)
        automaticConnectionCache = pool.connectionCacheSize == nil
        sharedHeaders = SharedHeaderLists(options)
        logger = configuration.logger

        if let failure = poller.failure {
            // Without its epoll set the loop cannot wait for anything: it refuses every request,
            // saying why (``refusal``), instead of starting.
            inbox.withLock { $0.closed = true }
            logger.error("CurlTransport cannot start its event loop", metadata: ["reason": "\(failure)"])
        }

        exited.enter()
        let thread = Thread { [self] in
            // Linux threads inherit their creator's name; give this one its own so it is
            // recognisable in `top -H`, debuggers and profiles. (Foundation's `Thread.name`
            // setter is not used: on Linux it can race with `start()` and do nothing.)
            _ = aif_set_current_thread_name(threadName)
            run()
        }
        // Loads may decode responses on this thread (`LoadExecutorChoice.transportThread`), and
        // `Decodable` goes a few kilobytes deeper per level of nesting: 8 MiB, like a main
        // thread's, so that the decoder's depth limit holds here in every build. Only the
        // pages used become resident.
        thread.stackSize = 8 << 20
        thread.start()
    }

    // MARK: - Any thread

    /// Whether the caller runs on this loop's thread.
    var isOnLoopThread: Bool {
        pthread_getspecific(loopThreadKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Hands a transfer to the loop. Returns `false` (and does nothing) after shutdown; the
    /// transfer should then be refused with ``refusal``.
    func submit(_ transfer: Transfer) -> Bool {
        enqueue(.start(transfer))
    }

    /// Why the loop no longer takes transfers: shut down, or unable to start.
    var refusal: String {
        if let failure = poller.failure {
            return "the transport could not start its event loop: \(failure)"
        }
        return "the transport was shut down before the request was submitted"
    }

    /// Asks the loop to cancel a transfer; harmless if it already ended.
    func cancel(_ transfer: Transfer) {
        _ = enqueue(.cancel(transfer))
    }

    /// Stops the loop: transfers in flight or queued end as cancelled, handles are freed, and
    /// the thread exits.
    ///
    /// - Parameter wait: Whether to block until the thread has exited (ignored on the loop
    ///   thread itself, which cannot wait for its own exit).
    func shutdown(wait: Bool) {
        _ = enqueue(.shutdown)
        if wait && !isOnLoopThread {
            exited.wait()
        }
    }

    private func enqueue(_ command: Command) -> Bool {
        if isOnLoopThread {
            // The loop drains these before it next polls; no lock or wake-up needed. After
            // shutdown the loop no longer drains anything.
            let closed = inbox.withLock { $0.closed }
            if closed { return false }
            localCommands.append(command)
            return true
        }
        let (accepted, wake) = inbox.withLock { inbox in
            if inbox.closed { return (false, false) }
            inbox.commands.append(command)
            if inbox.polling && !inbox.wakeupPending {
                inbox.wakeupPending = true
                wakersInFlight.add(1, ordering: .relaxed)
                return (true, true)
            }
            return (true, false)
        }
        // Outside the lock, counted so that shutdown closes the eventfd only after the signal.
        if wake {
            poller.wake()
            wakersInFlight.subtract(1, ordering: .releasing)
        }
        return accepted
    }

    /// Tells the loop that a transfer's control changed; harmless if it already ended. On the
    /// loop's thread (a stream's reader fell behind inside the body callback) it takes effect
    /// at once, before libcurl hands over more bytes.
    func steer(_ transfer: Transfer) {
        if isOnLoopThread {
            _ = perform(.steer(transfer))
        } else {
            _ = enqueue(.steer(transfer))
        }
    }

    /// Runs a load's work on the loop thread (on Dispatch's global queue once the loop has
    /// shut down), always after the caller returns.
    func run(_ work: @escaping @Sendable () -> Void) {
        if !enqueue(.call(work)) {
            DispatchQueue.global().async(execute: work)
        }
    }

    // MARK: - Task executor

    /// Runs a job on a Dispatch thread, for tasks that still prefer this loop after it closed.
    private func runElsewhere(_ job: UnownedJob) {
        DispatchQueue.global().async { [self] in
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    // MARK: - Loop thread

    private func run() {
        pthread_setspecific(loopThreadKey, Unmanaged.passUnretained(self).toOpaque())
        defer {
            pthread_setspecific(loopThreadKey, nil)
            exited.leave()
        }
        if poller.failure == nil {
            while true {
                if processCommands() { break }
                if !steered.isEmpty { wakeSteeredTransfers() }
                for multi in activeMultiHandles { multi.actOnExpiredTimeout() }
                if !bursting.isEmpty { endBursts() }
                completeFinishedTransfers()
                if !deadlines.isEmpty { endTransfersPastTheirDeadline() }
                if !localCommands.isEmpty { continue }
                let idle = inbox.withLock { inbox in
                    if !inbox.commands.isEmpty { return false }
                    inbox.polling = true
                    return true
                }
                // Even with commands waiting the loop looks at its sockets (without waiting), so
                // that a steady stream of commands cannot starve the transfers.
                poller.wait(milliseconds: idle ? waitLimit() : 0) { socket, readiness in
                    act(on: socket, readiness: readiness)
                }
            }
        }
        close()
    }

    // MARK: - libcurl's socket API

    /// libcurl's request (through a multi handle's socket callback) to watch a socket of that
    /// handle for `what` (`CURL_POLL_IN`, `_OUT`, `_INOUT`), or to stop (`CURL_POLL_REMOVE`).
    ///
    /// A socket libcurl stops watching stays in the epoll set: a kept-alive connection is
    /// usually wanted again by the next request, for the same events, and then costs no system
    /// call at all (measured at c=16: 1.6 `epoll_ctl` calls a request when every change went to
    /// epoll, none now). If such a socket reports something while unwanted (the server closed an
    /// idle connection), it leaves the set then. A socket closed leaves the set by itself: the
    /// loop opens and closes libcurl's connection sockets (``curlOpenSocket``,
    /// ``curlCloseSocket``), so it knows when a number is free again. Other sockets libcurl
    /// reports (a resolver's) are closed behind the loop's back, so every change to them goes
    /// to epoll, which then corrects a stale record (a modification fails and becomes an
    /// addition).
    func watch(_ socket: Int32, for what: Int32, from multi: MultiHandle) {
        guard socket >= 0 else { return }
        let index = Int(socket)
        growSocketTable(toHold: index)
        if what == CURL_POLL_REMOVE {
            sockets[index].wanted = false
            return
        }
        let events = what & CURL_POLL_INOUT
        let known = sockets[index]
        if known.openedByLoop && known.inEpollSet && known.events == events {
            sockets[index].wanted = true
            sockets[index].multiHandle = multi.index
        } else if poller.watch(socket, for: events, known: known.inEpollSet) {
            sockets[index] = SocketState(openedByLoop: known.openedByLoop, inEpollSet: true, events: events, wanted: true, multiHandle: multi.index)
        } else {
            // Never reported, the transfer on this socket ends at its timeout. epoll refuses only
            // when the system is out of memory or of epoll watches (`max_user_watches`).
            sockets[index] = SocketState(openedByLoop: known.openedByLoop)
            logger.warning("CurlTransport could not watch a socket", metadata: ["socket": "\(socket)", "error": "\(String(cString: strerror(errno)))"])
        }
    }

    /// Hands a socket epoll reported to its multi handle, or takes it out of the set if libcurl
    /// no longer wants it.
    private func act(on socket: Int32, readiness: Int32) {
        let index = Int(socket)
        guard index < sockets.count, sockets[index].wanted, let multi = multiHandles[sockets[index].multiHandle] else {
            poller.unwatch(socket)
            if index < sockets.count { sockets[index] = SocketState(openedByLoop: sockets[index].openedByLoop) }
            return
        }
        multi.act(on: socket, readiness: readiness)
    }

    /// A connection socket the loop opened for libcurl (``curlOpenSocket``): not watched yet.
    fileprivate func socketOpened(_ socket: Int32) {
        growSocketTable(toHold: Int(socket))
        sockets[Int(socket)] = SocketState(openedByLoop: true)
    }

    /// A socket about to be closed (``curlCloseSocket``): closing takes it out of the epoll set.
    fileprivate func socketClosing(_ socket: Int32) {
        if Int(socket) < sockets.count { sockets[Int(socket)] = SocketState() }
    }

    private func growSocketTable(toHold index: Int) {
        if index >= sockets.count {
            sockets.append(contentsOf: repeatElement(SocketState(), count: max(index + 1 - sockets.count, 64)))
        }
    }

    /// Lets the loop open and close the connection sockets of a new easy handle.
    private func manageSockets(of handle: EasyHandle) {
        let opaqueSelf = Unmanaged.passUnretained(self).toOpaque()
        _ = aif_curl_easy_setopt_opensocket_callback(handle.raw, curlOpenSocket)
        _ = aif_curl_easy_setopt_pointer(handle.raw, CURLOPT_OPENSOCKETDATA, opaqueSelf)
        _ = aif_curl_easy_setopt_closesocket_callback(handle.raw, curlCloseSocket)
        _ = aif_curl_easy_setopt_pointer(handle.raw, CURLOPT_CLOSESOCKETDATA, opaqueSelf)
    }

    /// How long the loop may wait for its sockets, in milliseconds: until a multi handle's
    /// timeout, the earliest transfer deadline or the end of a rate-limit wait, at most a second.
    private func waitLimit() -> Int32 {
        let limit: Int32 = steered.isEmpty ? 1_000 : pollTimeoutForSteering()
        var deadline = deadlines.earliest ?? .max
        for multi in activeMultiHandles {
            deadline = min(deadline, multi.timeoutDeadline ?? .max)
        }
        guard deadline != .max else { return limit }
        let now = TransferSteering.now()
        // Rounded up, so that the loop does not wake a little early and spin until it is due.
        let untilDeadline = deadline > now ? Int32(min(1_000, (deadline - now + 999_999) / 1_000_000)) : 0
        return min(limit, untilDeadline)
    }

    /// Ends, as timed out, every running transfer whose total deadline has passed — whatever
    /// libcurl is doing with it (waiting for a connection, connecting, waiting for the answer,
    /// receiving it).
    private func endTransfersPastTheirDeadline() {
        let now = TransferSteering.now()
        var resumptions: [(Transfer, Result<HTTPResponse, TransportError>)] = []
        while let transfer = deadlines.popExpired(now: now) {
            guard transfer.state.timeOut() == .removeAndDeliverTimeout else { continue }
            // Without a handle it was still waiting for a slot.
            let outcome = Result<HTTPResponse, TransportError>.failure(transfer.timeoutError(handle: transfer.handle, now: now))
            detachFromMultiHandle(transfer)
            end(transfer, with: outcome, batching: &resumptions)
        }
        deliverInBatches(resumptions)
    }

    /// Runs queued commands; returns whether one of them was `shutdown`.
    private func processCommands() -> Bool {
        inbox.withLock { inbox in
            swap(&inbox.commands, &drained)
            inbox.polling = false
            inbox.wakeupPending = false
        }
        var shutdownRequested = false
        for command in drained {
            shutdownRequested = perform(command) || shutdownRequested
        }
        drained.removeAll(keepingCapacity: true)
        while !localCommands.isEmpty {
            let commands = localCommands
            localCommands.removeAll(keepingCapacity: true)
            for command in commands {
                shutdownRequested = perform(command) || shutdownRequested
            }
        }
        return shutdownRequested
    }

    private func perform(_ command: Command) -> Bool {
        switch command {
        case .start(let transfer):
            start(transfer)
        case .cancel(let transfer):
            cancel(onLoop: transfer)
        case .run(let job):
            job.runSynchronously(on: asUnownedTaskExecutor())
        case .call(let work):
            work()
        case .steer(let transfer):
            if let steering = transfer.steering, let handle = transfer.handle {
                if let control = transfer.request.control { steering.update(control.settings) }
                // A streamed body may have bytes again; if not, the read callback waits anew.
                steering.bodyMayHaveArrived()
                steering.apply(to: handle)
            }
        case .shutdown:
            return true
        }
        return false
    }

    // MARK: - Steered transfers

    /// Starts steering a transfer with a control, as the control says.
    private func startSteering(_ transfer: Transfer, _ handle: EasyHandle) {
        let control = transfer.request.control
        let steering = TransferSteering(control?.bind(transfer, on: self) ?? TransferControl.Settings(), control: control)
        transfer.steering = steering
        steered.append(transfer)
        steering.apply(to: handle)
    }

    /// Lets go on the directions whose rate-limit wait is over.
    private func wakeSteeredTransfers() {
        let now = TransferSteering.now()
        for transfer in steered {
            if let steering = transfer.steering, let handle = transfer.handle, steering.wakeUp(now: now) {
                steering.apply(to: handle)
            }
        }
    }

    /// How long the loop may sleep before a rate-limit wait ends (at most a second), in
    /// milliseconds.
    private func pollTimeoutForSteering() -> Int32 {
        let wakeUps = steered.compactMap { $0.steering?.wakeUpTime }
        guard let earliest = wakeUps.min() else { return 1_000 }
        let now = TransferSteering.now()
        guard earliest > now else { return 0 }
        return Int32(min(1_000, (earliest - now + 999_999) / 1_000_000))
    }

    private func stopSteering(_ transfer: Transfer) {
        transfer.steering = nil
        transfer.request.control?.unbind(transfer)
        if let index = steered.firstIndex(where: { $0 === transfer }) {
            steered.swapAt(index, steered.count - 1)
            steered.removeLast()
        }
    }

    private func start(_ transfer: Transfer) {
        switch transfer.state.start() {
        case .addToMulti:
            break
        case .deliverCancellation:
            transfer.deliver(.failure(Self.cancellation(of: transfer)))
            return
        case .ignore:
            return
        }
        transfer.setDeadline(options)
        if transfer.deadline != .max { deadlines.insert(transfer) }
        // Over its host's limit it waits here, its deadline kept, until a slot comes free.
        if slots.admit(transfer) { launch(transfer) }
    }

    /// Configures an easy handle for an admitted transfer and adds it to the multi handle —
    /// unless its request's ``SendingCondition`` withdraws it now.
    private func launch(_ transfer: Transfer) {
        if let condition = transfer.request.sendingCondition, !condition.allowsSending() {
            failToStart(transfer, TransportError(.withdrawn, url: transfer.urlString, detail: "the request was withdrawn before it was sent"))
            return
        }
        let handle: EasyHandle
        if let reused = idleHandles.popLast() {
            handle = reused
        } else if let created = EasyHandle() {
            let code = created.applyTransportOptions(options)
            guard code == CURLE_OK else {
                failToStart(transfer, TransportError(.invalidRequest, url: transfer.urlString, detail: "libcurl rejected the transport configuration: \(String(cString: curl_easy_strerror(code)))", curlCode: Int(code.rawValue)))
                return
            }
            manageSockets(of: created)
            handle = created
        } else {
            failToStart(transfer, TransportError(.other, url: transfer.urlString, detail: "libcurl could not allocate an easy handle"))
            return
        }
        transfer.handle = handle
        do {
            try transfer.configure(handle, with: options, sharedHeaders: sharedHeaders, loop: self)
        } catch {
            failToStart(transfer, error)
            return
        }
        guard let multi = multiHandle(at: slots.multiHandle(of: transfer)) else {
            failToStart(transfer, TransportError(.other, url: transfer.urlString, detail: "libcurl could not allocate a multi handle"))
            return
        }
        let added = curl_multi_add_handle(multi.raw, handle.raw)
        guard added == CURLM_OK else {
            failToStart(transfer, TransportError(.other, url: transfer.urlString, detail: "curl_multi_add_handle failed: \(String(cString: curl_multi_strerror(added)))"))
            return
        }
        transfer.multiHandle = multi
        multi.running += 1
        transfer.runningIndex = running.count
        running.append(transfer)
        if transfer.request.control != nil || transfer.streamsBody { startSteering(transfer, handle) }
        if automaticConnectionCache { multi.growConnectionCacheIfNeeded(cap: options.configuration.connectionPool.maxConnections) }
    }

    /// The multi handle at `index`, made now if it is the first transfer's there.
    private func multiHandle(at index: Int) -> MultiHandle? {
        if let multi = multiHandles[index] { return multi }
        guard let made = MultiHandle(index: index, loop: self, perHost: slots.perHostInEachMultiHandle, options: options) else { return nil }
        multiHandles[index] = made
        activeMultiHandles.append(made)
        return made
    }

    /// Takes a running transfer's easy handle out of its multi handle.
    private func detachFromMultiHandle(_ transfer: Transfer) {
        guard let multi = transfer.multiHandle else { return }
        if let handle = transfer.handle { _ = curl_multi_remove_handle(multi.raw, handle.raw) }
        multi.running -= 1
        transfer.multiHandle = nil
    }

    private func failToStart(_ transfer: Transfer, _ error: TransportError) {
        guard transfer.state.startFailed() == .deliverFailure else { return }
        deadlines.remove(transfer)
        // No waiting transfer is started from here: the caller that admitted this one does.
        _ = slots.release(transfer)
        recycle(transfer)
        transfer.deliver(.failure(error))
    }

    private func cancel(onLoop transfer: Transfer, shuttingDown: Bool = false) {
        switch shuttingDown ? transfer.state.shutDown() : transfer.state.cancel() {
        case .ignore, .deferUntilStart:
            return
        case .deliverCancellation:
            break
        case .removeAndDeliverCancellation:
            detachFromMultiHandle(transfer)
            removeFromRunning(transfer)
            recycle(transfer)
        }
        transfer.deliver(.failure(Self.cancellation(of: transfer, shuttingDown: shuttingDown)))
    }

    private static func cancellation(of transfer: Transfer, shuttingDown: Bool = false) -> TransportError {
        TransportError(
            .cancelled, url: transfer.urlString, detail: shuttingDown ? "the transport was shut down" : "the request was cancelled", resends: transfer.resends)
    }

    /// Delivers the outcome of every transfer libcurl reports done.
    ///
    /// Completion handlers run here, on the loop thread. Transfers whose outcome wakes a task
    /// that runs elsewhere — the async face's, and exchanges for an executor that takes its work
    /// in batches (an async-face load's) — are different: resuming a continuation wakes a thread
    /// of the global executor, and on a busy CPU the woken thread preempts the loop — one
    /// wake-up and two context switches per request (measured: ~1.6 per request at concurrency
    /// 16). So their outcomes are delivered together, from one Dispatch block per batch.
    private func completeFinishedTransfers() {
        if !answeredOverHTTP2.isEmpty { startMultiplexing() }
        var resumptions: [(Transfer, Result<HTTPResponse, TransportError>)] = []
        for multi in activeMultiHandles {
            completeFinishedTransfers(of: multi, batching: &resumptions)
        }
        deliverInBatches(resumptions)
    }

    /// A transfer's head came over HTTP/2 (from its header callback, on the loop's thread).
    func noteAnswerOverHTTP2(_ transfer: Transfer) {
        answeredOverHTTP2.append(transfer)
    }

    /// Body bytes of `transfer` reached a receiver that gathers them (from its write callback,
    /// on the loop's thread).
    func noteBurst(of transfer: Transfer) {
        bursting.append(transfer)
    }

    /// Tells the transfers that received body bytes since the last turn that their bursts have
    /// ended: everything libcurl handed over in the socket actions, timeouts and unpausing of
    /// the turn, before any of them is completed.
    private func endBursts() {
        for transfer in bursting { transfer.endBurst() }
        bursting.removeAll(keepingCapacity: true)
    }

    /// Lets the origins whose heads came over HTTP/2 have as many transfers in libcurl as their
    /// connections carry streams, and starts those that waited.
    private func startMultiplexing() {
        for transfer in answeredOverHTTP2 {
            if let origin = slots.noteMultiplexing(of: transfer) { startWaiting(for: origin) }
        }
        answeredOverHTTP2.removeAll(keepingCapacity: true)
    }

    private func completeFinishedTransfers(of multi: MultiHandle, batching resumptions: inout [(Transfer, Result<HTTPResponse, TransportError>)]) {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi.raw, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = aif_curl_msg_result(message)
            var privateData: UnsafeMutableRawPointer?
            _ = aif_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &privateData)
            guard let privateData, let transfer = EasyHandle.transfer(of: privateData) else { continue }
            guard transfer.state.done(succeeded: code == CURLE_OK) == .removeAndDeliver, let handle = transfer.handle else { continue }
            let outcome = transfer.outcome(code: code, handle: handle)
            if case .success(let response) = outcome, let condition = transfer.request.sendingCondition {
                // Before its slot goes to the next transfer (which the answer may withdraw).
                condition.responseArrived(statusCode: response.statusCode)
            }
            if case .success(let response) = outcome, response.httpVersion == .http2, let origin = slots.noteMultiplexing(of: transfer) {
                startWaiting(for: origin)
            }
            detachFromMultiHandle(transfer)
            end(transfer, with: outcome, batching: &resumptions)
        }
    }

    /// Lets go of a transfer out of the multi handle and delivers its outcome: at once, or with
    /// the batch when it completes in batches.
    private func end(
        _ transfer: Transfer, with outcome: Result<HTTPResponse, TransportError>,
        batching resumptions: inout [(Transfer, Result<HTTPResponse, TransportError>)]
    ) {
        removeFromRunning(transfer)
        recycle(transfer)
        if transfer.completesInBatches {
            resumptions.append((transfer, outcome))
        } else {
            transfer.deliver(outcome)
        }
    }

    /// Hands the outcomes of transfers that complete in batches to one Dispatch block.
    private func deliverInBatches(_ resumptions: [(Transfer, Result<HTTPResponse, TransportError>)]) {
        guard !resumptions.isEmpty else { return }
        DispatchQueue.global().async { Self.deliver(resumptions) }
    }

    /// Delivers a batch of outcomes, in order.
    private static func deliver(_ batch: [(Transfer, Result<HTTPResponse, TransportError>)]) {
        for (transfer, outcome) in batch { transfer.deliver(outcome) }
    }

    /// Takes a transfer out of the running table (the last one moves into its slot) and out of
    /// the deadlines.
    private func removeFromRunning(_ transfer: Transfer) {
        deadlines.remove(transfer)
        if let origin = slots.release(transfer) { startWaiting(for: origin) }
        let index = transfer.runningIndex
        guard index >= 0, index < running.count, running[index] === transfer else { return }
        let last = running.removeLast()
        if last !== transfer {
            running[index] = last
            last.runningIndex = index
        }
        transfer.runningIndex = -1
    }

    /// Starts the transfers waiting for `origin` that its free slots allow.
    private func startWaiting(for origin: Int) {
        while let next = slots.nextToStart(for: origin) {
            launch(next)
        }
    }

    /// Releases the transfer's resources and returns its handle to the pool.
    private func recycle(_ transfer: Transfer) {
        if transfer.steering != nil { stopSteering(transfer) }
        transfer.releaseResources()
        if let handle = transfer.handle {
            transfer.handle = nil
            handle.transfer = nil
            idleHandles.append(handle)
        }
    }

    private func close() {
        let late = inbox.withLock { inbox in
            inbox.closed = true
            defer { inbox.commands = [] }
            return inbox.commands
        }
        // Transfers waiting for a slot first, so that none is started as the running ones end.
        let cancelled = slots.removeAllWaiting() + running
        for transfer in cancelled {
            cancel(onLoop: transfer, shuttingDown: true)
        }
        // Transfers that arrived too late end as cancelled; jobs and work still run, elsewhere.
        for command in late + localCommands {
            switch command {
            case .start(let transfer): cancel(onLoop: transfer, shuttingDown: true)
            case .run(let job): runElsewhere(job)
            case .call(let work): DispatchQueue.global().async(execute: work)
            case .cancel, .steer, .shutdown: break
            }
        }
        localCommands = []
        if !cancelled.isEmpty {
            logger.debug("CurlTransport shut down", metadata: ["cancelled": "\(cancelled.count)"])
        }
        idleHandles.removeAll()
        for multi in activeMultiHandles { multi.cleanUp() }
        activeMultiHandles = []
        sharedHeaders.free()
        // The inbox is closed, so no new signal can start; one already decided takes a system
        // call's time.
        while wakersInFlight.load(ordering: .acquiring) > 0 {
            sched_yield()
        }
        poller.closeDescriptors()
    }
}

/// The loop is also a task executor: tasks that prefer it run on the loop thread between
/// libcurl calls, so awaiting a transfer resumes without a thread hop. After shutdown their jobs
/// run on Dispatch's global queue instead.
extension CurlEventLoop: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !enqueue(.run(job)) {
            runElsewhere(job)
        }
    }
}

/// One socket, as the loop knows it.
private struct SocketState {
    /// The loop opened it for libcurl and will see it closed (``curlCloseSocket``), so what it
    /// knows of it is exact.
    var openedByLoop = false
    /// The socket is in the epoll set (as far as the loop knows: closing it takes it out).
    var inEpollSet = false
    /// What epoll watches it for (`CURL_POLL_IN`, `_OUT` or both).
    var events: Int32 = 0
    /// libcurl wants it watched.
    var wanted = false
    /// The multi handle whose connection it is (``MultiHandle/index``).
    var multiHandle = 0
}

/// CURLOPT_OPENSOCKETFUNCTION: opens a connection socket for libcurl and tells the loop (its
/// user data).
private func curlOpenSocket(_ loop: UnsafeMutableRawPointer?, _ purpose: curlsocktype, _ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
    let socket = aif_curl_open_socket(address)
    if socket >= 0, let loop {
        Unmanaged<CurlEventLoop>.fromOpaque(loop).takeUnretainedValue().socketOpened(socket)
    }
    return socket
}

/// CURLOPT_CLOSESOCKETFUNCTION: tells the loop (its user data), then closes the socket.
private func curlCloseSocket(_ loop: UnsafeMutableRawPointer?, _ socket: curl_socket_t) -> Int32 {
    if let loop {
        Unmanaged<CurlEventLoop>.fromOpaque(loop).takeUnretainedValue().socketClosing(socket)
    }
    return close(socket)
}
