import Foundation

/// The event loop's admission of transfers to libcurl, host by host, and the choice of the multi
/// handle each one runs in.
///
/// At most ``CurlTransport/Configuration/ConnectionPool-swift.struct/maxConnectionsPerHost``
/// transfers of one origin (scheme, host and port) run in libcurl at once — that many times
/// ``CurlTransport/Configuration/Limits-swift.struct/maxConcurrentStreamsPerConnection`` once a
/// response head has come from the origin over HTTP/2 — and the rest wait here, first come first
/// served.
///
/// libcurl 7.88 has a queue of its own for transfers over its per-host limit, and it serves them
/// badly: it retries one waiting transfer (the oldest, of any host) each time any transfer ends,
/// so a connection that comes free can stay unused while a busy host's transfers keep going to
/// the back of the line; under a steady load a transfer to a host that answers at once waited
/// more than ten seconds there. Here a host's freed slot goes to its own next transfer at once.
/// libcurl's limit stays set too, as a backstop; it is not reached.
///
/// **Lanes.** An origin's slots are split into lanes of at most ``connectionsPerLane``
/// connections, each lane in a multi handle of its own (``multiHandle(of:)``: lane `k` of an
/// origin in handle `hash + k`), because libcurl walks every connection of a multi handle for
/// each request (see ``MultiHandle``). A transfer takes the first lane with a free slot, so a
/// steady load keeps reusing the same connections, and the lanes' limits add up to the origin's:
/// no more connections to one host than configured, whichever handles they are in. Origins are
/// spread over the handles by their hash. With a total connection cap or a fixed connection cache
/// size the loop keeps one multi handle (libcurl enforces both per handle), and lanes are off.
///
/// Used on the event loop's thread alone.
struct HostSlots {
    /// The most connections of one origin in one multi handle: at a few hundred, libcurl's walks
    /// over a handle's connections cost little next to the rest of a request.
    static let connectionsPerLane = 256
    /// The most multi handles a loop uses.
    static let maxMultiHandles = 16

    private struct Host {
        /// Transfers in libcurl, all lanes together.
        var running = 0
        /// Transfers in libcurl by lane, when the origin has more than one lane.
        var laneRunning: [Int]
        var waiting: [Transfer] = []
        /// The index of the first transfer still waiting (the array is compacted when it drains).
        var head = 0
        var multiplexes = false

        init(lanes: Int) {
            laneRunning = lanes > 1 ? Array(repeating: 0, count: lanes) : []
        }

        var hasWaiting: Bool { head < waiting.count }
    }

    /// How an origin's slots divide into lanes: fixed as the slots are made.
    ///
    /// A value of its own, apart from ``hosts``: the slots' methods change a host in place in the
    /// dictionary while these rules decide, and rules read from `self` meanwhile would have the
    /// slots copied — the dictionary with them, for every transfer.
    private struct Lanes {
        /// Transfers of one origin allowed in libcurl at once over HTTP/1; `nil`: no limit.
        let perHost: Int?
        let streamsPerConnection: Int
        /// Lanes per origin (at most ``multiHandleCount``, so that one origin's lanes are in
        /// different handles).
        let count: Int

        /// Counts `transfer` as running in its host's first free lane, or queues it behind the
        /// host's waiting transfers; whether it may start now.
        func admit(_ transfer: Transfer, _ origin: Int, into host: inout Host) -> Bool {
            if !host.hasWaiting, let lane = freeLane(of: host) {
                take(lane, of: &host, for: transfer, origin)
                return true
            }
            host.waiting.append(transfer)
            return false
        }

        /// The host's next waiting transfer that may start now, counted as running.
        func next(of host: inout Host, _ origin: Int) -> Transfer? {
            while host.hasWaiting, let lane = freeLane(of: host) {
                let transfer = host.waiting[host.head]
                host.head += 1
                if host.head == host.waiting.count {
                    host.waiting.removeAll(keepingCapacity: true)
                    host.head = 0
                }
                if transfer.state.isFinished { continue }
                take(lane, of: &host, for: transfer, origin)
                return transfer
            }
            return nil
        }

        /// The first lane of `host` with a free slot, if any.
        private func freeLane(of host: Host) -> Int? {
            if count == 1 { return host.running < limit(ofLane: 0, host) ? 0 : nil }
            return host.laneRunning.indices.first { host.laneRunning[$0] < limit(ofLane: $0, host) }
        }

        /// How many transfers lane `lane` of `host` may have in libcurl: its share of the per-host
        /// limit (the lanes' shares add up to it), or without a limit ``HostSlots/connectionsPerLane``
        /// in each lane but the last, which takes what the others cannot.
        private func limit(ofLane lane: Int, _ host: Host) -> Int {
            let perConnection = host.multiplexes ? streamsPerConnection : 1
            guard let perHost else {
                return lane == count - 1 ? .max : HostSlots.connectionsPerLane * perConnection
            }
            let share = perHost / count + (lane < perHost % count ? 1 : 0)
            return share * perConnection
        }

        private func take(_ lane: Int, of host: inout Host, for transfer: Transfer, _ origin: Int) {
            host.running += 1
            if count > 1 { host.laneRunning[lane] += 1 }
            transfer.slotOrigin = origin
            transfer.slotLane = lane
            transfer.slotKnowsMultiplexing = host.multiplexes
        }
    }

    private let lanes: Lanes
    /// How many multi handles the loop may use: ``maxMultiHandles``, or 1 (see the lanes above).
    let multiHandleCount: Int
    /// Whether transfers are counted at all: not with neither a per-host limit nor lanes.
    private let counts: Bool
    /// By ``originKey(of:)``.
    private var hosts: [Int: Host] = [:]
    /// The URL bytes up to the end of the authority of the last origin keyed, and its key: most
    /// of a transport's requests go to the origin of the request before.
    private var lastOrigin: (prefix: [UInt8], key: Int)?

    init(perHost: Int?, streamsPerConnection: Int, oneMultiHandle: Bool = false) {
        let perHost = perHost.flatMap { $0 > 0 ? $0 : nil }
        let handles = oneMultiHandle ? 1 : Self.maxMultiHandles
        multiHandleCount = handles
        let count = perHost.map { min(handles, ($0 + Self.connectionsPerLane - 1) / Self.connectionsPerLane) } ?? handles
        lanes = Lanes(perHost: perHost, streamsPerConnection: max(1, streamsPerConnection), count: count)
        counts = perHost != nil || handles > 1
    }

    /// libcurl's own limit of connections to one host in each multi handle: the largest lane's
    /// share of the per-host limit.
    var perHostInEachMultiHandle: Int? {
        lanes.perHost.map { ($0 + lanes.count - 1) / lanes.count }
    }

    /// Whether `transfer` may start now (and in which lane); if not, it waits for its host's
    /// next free slot.
    mutating func admit(_ transfer: Transfer) -> Bool {
        transfer.slotLane = 0
        guard counts, let origin = origin(of: transfer.urlString) else { return true }
        return lanes.admit(transfer, origin, into: &hosts[origin, default: Host(lanes: lanes.count)])
    }

    /// The index of the multi handle an admitted transfer runs in (less than
    /// ``multiHandleCount``): its origin's lane, spread over the handles by the origin's hash.
    func multiHandle(of transfer: Transfer) -> Int {
        guard multiHandleCount > 1, let origin = transfer.slotOrigin else { return 0 }
        return Int((UInt(bitPattern: origin) &+ UInt(transfer.slotLane)) % UInt(multiHandleCount))
    }

    /// Gives back the slot of a transfer that leaves libcurl (or never got there); returns its
    /// origin when a transfer may be waiting for it (see ``nextToStart(for:)``).
    mutating func release(_ transfer: Transfer) -> Int? {
        guard let origin = transfer.slotOrigin, let index = hosts.index(forKey: origin) else { return nil }
        transfer.slotOrigin = nil
        hosts.values[index].running -= 1
        if lanes.count > 1 { hosts.values[index].laneRunning[transfer.slotLane] -= 1 }
        let host = hosts.values[index]
        if host.hasWaiting { return origin }
        // An idle host is forgotten, unless it is known to multiplex.
        if host.running == 0, !host.multiplexes { hosts.remove(at: index) }
        return nil
    }

    /// The next waiting transfer of `origin` that may start now, counted as running; transfers
    /// that ended while they waited (cancelled, timed out) are passed over.
    mutating func nextToStart(for origin: Int) -> Transfer? {
        guard let index = hosts.index(forKey: origin) else { return nil }
        return lanes.next(of: &hosts.values[index], origin)
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

    /// ``originKey(of:)``, read from the last origin's when `url` starts with its scheme and
    /// authority and goes on with nothing, a path, a query or a fragment: the same origin, as the
    /// key is made of those bytes alone. (No hashing for the requests that follow one to the
    /// same origin; a URL of another origin costs one comparison more.)
    mutating func origin(of url: String) -> Int? {
        var url = url
        return url.withUTF8 { bytes -> Int? in
            if let last = lastOrigin, Self.url(bytes, startsWithOrigin: last.prefix) { return last.key }
            guard let (key, authorityEnd) = Self.keyAndAuthorityEnd(of: bytes) else { return nil }
            lastOrigin = (Array(bytes[..<authorityEnd]), key)
            return key
        }
    }

    /// Whether `url` is `origin`'s bytes followed by nothing or by a path, query or fragment.
    private static func url(_ url: UnsafeBufferPointer<UInt8>, startsWithOrigin origin: [UInt8]) -> Bool {
        let count = origin.count
        guard url.count >= count, let base = url.baseAddress else { return false }
        if url.count > count {
            let next = url[count]
            guard next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#") else { return false }
        }
        return origin.withUnsafeBufferPointer { memcmp($0.baseAddress!, base, count) == 0 }
    }

    /// A number naming the origin of an absolute http(s) URL — its scheme, host and port, case
    /// aside, the scheme's default port written out or not — or `nil` for anything else (libcurl
    /// then refuses it). A hash of the bytes, read in place.
    static func originKey(of url: String) -> Int? {
        var url = url
        return url.withUTF8 { keyAndAuthorityEnd(of: $0)?.key }
    }

    /// The origin's key (see ``originKey(of:)``) and where its authority ends in `bytes`.
    private static func keyAndAuthorityEnd(of bytes: UnsafeBufferPointer<UInt8>) -> (key: Int, authorityEnd: Int)? {
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
        return (hasher.finalize(), index)
    }
}
