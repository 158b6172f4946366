import Foundation

/// The event loop's admission of transfers to libcurl, host by host: at most
/// ``CurlTransport/Configuration/ConnectionPool-swift.struct/maxConnectionsPerHost`` transfers of
/// one origin (scheme, host and port) run in libcurl at once — that many times
/// ``CurlTransport/Configuration/Limits-swift.struct/maxConcurrentStreamsPerConnection`` once the
/// origin has answered over HTTP/2 — and the rest wait here, first come first served.
///
/// libcurl 7.88 has a queue of its own for transfers over its per-host limit, and it serves them
/// badly: it retries one waiting transfer (the oldest, of any host) each time any transfer ends,
/// so a connection that comes free can stay unused while a busy host's transfers keep going to
/// the back of the line; under a steady load a transfer to a host that answers at once waited
/// more than ten seconds there. Here a host's freed slot goes to its own next transfer at once.
/// libcurl's limit stays set too, as a backstop; it is not reached.
///
/// Used on the event loop's thread alone.
struct HostSlots {
    private struct Host {
        var running = 0
        var waiting: [Transfer] = []
        /// The index of the first transfer still waiting (the array is compacted when it drains).
        var head = 0
        var multiplexes = false

        var hasWaiting: Bool { head < waiting.count }
    }

    /// Transfers of one origin allowed in libcurl at once over HTTP/1; `nil`: no limit.
    private let perHost: Int?
    private let streamsPerConnection: Int
    private var hosts: [String: Host] = [:]

    init(perHost: Int?, streamsPerConnection: Int) {
        self.perHost = perHost.flatMap { $0 > 0 ? $0 : nil }
        self.streamsPerConnection = max(1, streamsPerConnection)
    }

    /// Whether `transfer` may start now; if not, it waits for its host's next free slot.
    mutating func admit(_ transfer: Transfer) -> Bool {
        guard let perHost, let origin = Self.origin(of: transfer.urlString) else { return true }
        var host = hosts[origin] ?? Host()
        defer { hosts[origin] = host }
        if !host.hasWaiting, host.running < limit(host, perHost) {
            host.running += 1
            transfer.slotOrigin = origin
            return true
        }
        host.waiting.append(transfer)
        return false
    }

    /// Gives back the slot of a transfer that leaves libcurl (or never got there); returns its
    /// origin when a transfer may be waiting for it (see ``nextToStart(for:)``).
    mutating func release(_ transfer: Transfer) -> String? {
        guard let origin = transfer.slotOrigin, var host = hosts[origin] else { return nil }
        transfer.slotOrigin = nil
        host.running -= 1
        if host.running == 0, !host.hasWaiting, !host.multiplexes {
            hosts[origin] = nil
            return nil
        }
        hosts[origin] = host
        return host.hasWaiting ? origin : nil
    }

    /// The next waiting transfer of `origin` that may start now, counted as running; transfers
    /// that ended while they waited (cancelled, timed out) are passed over.
    mutating func nextToStart(for origin: String) -> Transfer? {
        guard let perHost, var host = hosts[origin] else { return nil }
        defer { hosts[origin] = host }
        while host.hasWaiting, host.running < limit(host, perHost) {
            let transfer = host.waiting[host.head]
            host.head += 1
            if host.head == host.waiting.count {
                host.waiting.removeAll(keepingCapacity: true)
                host.head = 0
            }
            if transfer.state.isFinished { continue }
            host.running += 1
            transfer.slotOrigin = origin
            return transfer
        }
        return nil
    }

    /// Notes that `transfer`'s origin answered over HTTP/2, so its transfers share connections;
    /// returns the origin when more of its waiting transfers may now start.
    mutating func noteMultiplexing(of transfer: Transfer) -> String? {
        guard let origin = transfer.slotOrigin, var host = hosts[origin], !host.multiplexes else { return nil }
        host.multiplexes = true
        hosts[origin] = host
        return host.hasWaiting ? origin : nil
    }

    /// Takes out every waiting transfer (at shutdown).
    mutating func removeAllWaiting() -> [Transfer] {
        var all: [Transfer] = []
        for (origin, host) in hosts where host.hasWaiting {
            all += host.waiting[host.head...]
            hosts[origin]?.waiting = []
            hosts[origin]?.head = 0
        }
        return all
    }

    private func limit(_ host: Host, _ perHost: Int) -> Int {
        host.multiplexes ? perHost * streamsPerConnection : perHost
    }

    /// `scheme://host:port` of an absolute http(s) URL, lowercased, with the scheme's default port
    /// written out; `nil` for anything else (libcurl then refuses it).
    static func origin(of url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        let rest = url[schemeEnd.upperBound...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        guard !authority.isEmpty else { return nil }
        let host = authority.lowercased()
        // A port is what follows the last colon after any bracketed IPv6 address.
        let afterAddress = host.lastIndex(of: "]").map { host[host.index(after: $0)...] } ?? host[...]
        if afterAddress.contains(":") { return scheme + "://" + host }
        switch scheme {
        case "http": return "http://" + host + ":80"
        case "https": return "https://" + host + ":443"
        default: return nil
        }
    }
}
