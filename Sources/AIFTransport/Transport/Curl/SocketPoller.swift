import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The event loop's epoll set: the sockets libcurl asks it to watch, and an eventfd that other
/// threads signal to wake the loop.
///
/// A wait costs in proportion to the sockets that are ready, not to the sockets watched, which is
/// what lets thousands of mostly idle transfers share one thread.
///
/// Its owner closes the two descriptors with ``closeDescriptors()`` when it shuts down, so that they are
/// gone when the shutdown returns rather than whenever the owner is freed.
struct SocketPoller: ~Copyable {
    private let epoll: Int32
    private let wakeSignal: Int32
    private let ready: UnsafeMutablePointer<aif_ready_socket>

    /// Why the set could not be made (out of descriptors or memory), naming the call and the
    /// system's reason; `nil` when it works. A poller that failed reports nothing ready.
    let failure: String?

    /// Creates the epoll set and the wake-up eventfd.
    init() {
        ready = .allocate(capacity: Int(aif_epoll_batch))
        epoll = aif_epoll_create()
        guard epoll >= 0 else {
            wakeSignal = -1
            failure = Self.describeFailure(of: "epoll_create1")
            return
        }
        wakeSignal = aif_eventfd_create()
        if wakeSignal < 0 {
            failure = Self.describeFailure(of: "eventfd")
        } else if aif_epoll_watch(epoll, wakeSignal, CURL_POLL_IN, 0) != 0 {
            failure = Self.describeFailure(of: "epoll_ctl")
        } else {
            failure = nil
        }
    }

    deinit {
        ready.deallocate()
    }

    /// Closes the epoll set and the eventfd. Call it once, after the last ``wait(milliseconds:_:)``
    /// and when no thread can call ``wake()`` any more.
    func closeDescriptors() {
        if wakeSignal >= 0 { _ = close(wakeSignal) }
        if epoll >= 0 { _ = close(epoll) }
    }

    private static func describeFailure(of call: String) -> String {
        "\(call) failed: \(String(cString: strerror(errno)))"
    }

    /// Watches `socket` for what libcurl's `what` (`CURL_POLL_IN`, `_OUT` or `_INOUT`) asks;
    /// `known` says whether it is already watched. Returns whether epoll took it.
    func watch(_ socket: Int32, for what: Int32, known: Bool) -> Bool {
        aif_epoll_watch(epoll, socket, what, known ? 1 : 0) == 0
    }

    /// Stops watching `socket` (harmless if it is already closed).
    func unwatch(_ socket: Int32) {
        aif_epoll_unwatch(epoll, socket)
    }

    /// Wakes a ``wait(milliseconds:_:)`` in progress, or makes the next one return at once.
    /// Safe from any thread until ``closeDescriptors()``.
    func wake() {
        aif_eventfd_signal(wakeSignal)
    }

    /// Waits at most `milliseconds` (-1: until something happens) and calls `body` with each
    /// ready socket and its readiness (`CURL_CSELECT_*` bits). A wake-up is consumed here, not
    /// reported. Returns how many sockets were ready.
    @discardableResult
    func wait(milliseconds: Int32, _ body: (_ socket: Int32, _ readiness: Int32) -> Void) -> Int {
        let count = Int(aif_epoll_wait(epoll, ready, milliseconds))
        guard count > 0 else { return 0 }
        for index in 0..<count {
            let event = ready[index]
            if event.fd == wakeSignal {
                aif_eventfd_drain(wakeSignal)
            } else {
                body(event.fd, event.events)
            }
        }
        return count
    }
}
