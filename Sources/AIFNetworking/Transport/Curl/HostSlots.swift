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

        func limit(_ perHost: Int, _ streamsPerConnection: Int) -> Int {
            multiplexes ? perHost * streamsPerConnection : perHost
        }
    }

    /// Transfers of one origin allowed in libcurl at once over HTTP/1; `nil`: no limit.
    private let perHost: Int?
    private let streamsPerConnection: Int
    /// By ``originKey(of:)``.
    private var hosts: [Int: Host] = [:]

    init(perHost: Int?, streamsPerConnection: Int) {
        self.perHost = perHost.flatMap { $0 > 0 ? $0 : nil }
        self.streamsPerConnection = max(1, streamsPerConnection)
    }

    /// Whether `transfer` may start now; if not, it waits for its host's next free slot.
    mutating func admit(_ transfer: Transfer) -> Bool {
        guard let perHost, let origin = Self.originKey(of: transfer.urlString) else { return true }
        return Self.admit(transfer, origin, into: &hosts[origin, default: Host()], limit: perHost, streamsPerConnection)
    }

    private static func admit(_ transfer: Transfer, _ origin: Int, into host: inout Host, limit perHost: Int, _ streams: Int) -> Bool {
        if !host.hasWaiting, host.running < host.limit(perHost, streams) {
            host.running += 1
            transfer.slotOrigin = origin
            return true
        }
        host.waiting.append(transfer)
        return false
    }

    /// Gives back the slot of a transfer that leaves libcurl (or never got there); returns its
    /// origin when a transfer may be waiting for it (see ``nextToStart(for:)``).
    mutating func release(_ transfer: Transfer) -> Int? {
        guard let origin = transfer.slotOrigin, let index = hosts.index(forKey: origin) else { return nil }
        transfer.slotOrigin = nil
        hosts.values[index].running -= 1
        let host = hosts.values[index]
        if host.hasWaiting { return origin }
        // An idle host is forgotten, unless it is known to multiplex.
        if host.running == 0, !host.multiplexes { hosts.remove(at: index) }
        return nil
    }

    /// The next waiting transfer of `origin` that may start now, counted as running; transfers
    /// that ended while they waited (cancelled, timed out) are passed over.
    mutating func nextToStart(for origin: Int) -> Transfer? {
        guard let perHost, let index = hosts.index(forKey: origin) else { return nil }
        return Self.next(of: &hosts.values[index], origin, limit: perHost, streamsPerConnection)
    }

    private static func next(of host: inout Host, _ origin: Int, limit perHost: Int, _ streams: Int) -> Transfer? {
        while host.hasWaiting, host.running < host.limit(perHost, streams) {
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
    mutating func noteMultiplexing(of transfer: Transfer) -> Int? {
        guard let origin = transfer.slotOrigin, let index = hosts.index(forKey: origin), !hosts.values[index].multiplexes else { return nil }
        hosts.values[index].multiplexes = true
        return hosts.values[index].hasWaiting ? origin : nil
    }

    /// Takes out every waiting transfer (at shutdown).
    mutating func removeAllWaiting() -> [Transfer] {
        var all: [Transfer] = []
        for index in hosts.indices where hosts.values[index].hasWaiting {
            all += hosts.values[index].waiting[hosts.values[index].head...]
            hosts.values[index].waiting = []
            hosts.values[index].head = 0
        }
        return all
    }

    /// A number naming the origin of an absolute http(s) URL — its scheme, host and port, case
    /// aside, the scheme's default port written out or not — or `nil` for anything else (libcurl
    /// then refuses it). A hash of the bytes, read in place: this runs for every request.
    static func originKey(of url: String) -> Int? {
        var url = url
        return url.withUTF8 { bytes -> Int? in
            var hasher = Hasher()
            var index = 0
            // The scheme, up to "://".
            let scheme: Int   // 1: http, 2: https
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") { index += 1 }
            func lowered(_ at: Int) -> UInt8 { bytes[at] | 0x20 }
            guard index == 4 || index == 5, lowered(0) == UInt8(ascii: "h"), lowered(1) == UInt8(ascii: "t"),
                lowered(2) == UInt8(ascii: "t"), lowered(3) == UInt8(ascii: "p")
            else { return nil }
            if index == 4 { scheme = 1 } else if lowered(4) == UInt8(ascii: "s") { scheme = 2 } else { return nil }
            guard index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") else { return nil }
            index += 3
            // The authority, up to the path, query or fragment; what follows an "@" replaces
            // what came before it (user information).
            var start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "/"), bytes[index] != UInt8(ascii: "?"), bytes[index] != UInt8(ascii: "#") {
                if bytes[index] == UInt8(ascii: "@") { start = index + 1 }
                index += 1
            }
            guard start < index else { return nil }
            hasher.combine(scheme)
            var portSeen = false
            var inBrackets = false
            for byte in bytes[start..<index] {
                if byte == UInt8(ascii: "[") { inBrackets = true } else if byte == UInt8(ascii: "]") { inBrackets = false }
                if byte == UInt8(ascii: ":"), !inBrackets { portSeen = true }
                hasher.combine(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            }
            if !portSeen {
                for byte in (scheme == 1 ? ":80" : ":443").utf8 { hasher.combine(byte) }
            }
            return hasher.finalize()
        }
    }
}
