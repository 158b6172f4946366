@testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

/// The event loop's bookkeeping for time and connections, without I/O: the deadline heap checked
/// against a sorted reference, and the host slots' origins and order.
@Suite("Transfer deadlines and host slots")
struct HostSlotsTests {
    private func transfer(_ url: String = "http://127.0.0.1:8080/a") -> Transfer {
        Transfer(request: HTTPRequest(url: URL(string: url)!), progress: nil, completion: nil)
    }

    @Test func originsNameSchemeHostAndPort() {
        func key(_ url: String) -> Int? { HostSlots.originKey(of: url) }
        #expect(key("http://Example.COM/a?b") == key("http://example.com:80/c"))
        #expect(key("HTTPS://example.com") == key("https://example.com:443/x#y"))
        #expect(key("http://user:pa@ss@127.0.0.1:8080/x") == key("http://127.0.0.1:8080"))
        #expect(key("https://[::1]/x") == key("https://[::1]:443"))
        #expect(key("https://[::1]:8443#f") != key("https://[::1]/"))
        #expect(key("http://example.com/") != key("https://example.com/"))
        #expect(key("http://example.com:8080/") != key("http://example.com:8081/"))
        #expect(key("http://example.com/") != key("http://example.org/"))
        #expect(key("ftp://example.com/") == nil)
        #expect(key("httpx://example.com/") == nil)
        #expect(key("http:/example.com") == nil)
        #expect(key("no scheme") == nil)
        #expect(key("http:///path") == nil)
    }

    /// The key remembered from the URL before is the key computed afresh, whatever follows:
    /// the same origin with a path, query, fragment or nothing; a longer host, another port,
    /// user information or case; another scheme; text that names no origin.
    @Test func aRememberedOriginIsTheOriginComputedAfresh() {
        let urls = [
            "http://a.example/x", "http://a.example", "http://a.example?q=1", "http://a.example#f",
            "http://a.example/x", "http://a.example.evil/x", "http://a.example", "http://a.exampl/x",
            "http://a.example:80/x", "http://a.example:8080/x", "http://a.example:80", "HTTP://A.example/x",
            "http://a.example/x", "http://u@a.example/x", "http://a.examplex", "https://a.example/x",
            "ftp://a.example/x", "http://a.example/x", "http:/a.example", "http://a.example/x", "",
            "http://[::1]:8080/x", "http://[::1]:8080", "http://[::1]:8081/x", "http://[::1]/x", "http://[::1]:8080?x",
        ]
        var slots = HostSlots(perHost: 2, streamsPerConnection: 1)
        for url in urls + urls.reversed() {
            #expect(slots.origin(of: url) == HostSlots.originKey(of: url), "\(url)")
        }
    }

    /// Random inserts and removals: the heap hands out expired transfers in deadline order, never
    /// one that was removed, and each transfer knows its place until it leaves.
    @Test func deadlinesComeOutInOrderAndRemovedOnesNever() {
        var random = SystemRandomNumberGenerator()
        var heap = TransferDeadlines()
        var reference: [ObjectIdentifier: UInt64] = [:]
        var transfers: [Transfer] = []
        for round in 0..<2_000 {
            if round % 3 == 2, let victim = transfers.randomElement(using: &random) {
                heap.remove(victim)
                heap.remove(victim)   // harmless twice
                reference[ObjectIdentifier(victim)] = nil
                #expect(victim.deadlineIndex == -1)
            } else {
                let transfer = transfer()
                transfer.deadline = UInt64.random(in: 0..<10_000, using: &random)
                heap.insert(transfer)
                transfers.append(transfer)
                reference[ObjectIdentifier(transfer)] = transfer.deadline
            }
        }
        var popped: [UInt64] = []
        while let transfer = heap.popExpired(now: 5_000) {
            #expect(reference.removeValue(forKey: ObjectIdentifier(transfer)) == transfer.deadline)
            popped.append(transfer.deadline)
        }
        #expect(popped == popped.sorted())
        #expect(reference.values.allSatisfy { $0 > 5_000 })
        #expect(heap.earliest == reference.values.min())
    }

    @Test func aHostsTransfersOverItsLimitWaitAndStartInOrder() {
        var slots = HostSlots(perHost: 2, streamsPerConnection: 100)
        let first = transfer(), second = transfer(), third = transfer(), fourth = transfer()
        let elsewhere = transfer("http://127.0.0.1:9090/b")
        let firstAdmitted = slots.admit(first)
        #expect(firstAdmitted)
        let secondAdmitted = slots.admit(second)
        #expect(secondAdmitted)
        let thirdAdmitted = slots.admit(third)
        #expect(!thirdAdmitted)
        let fourthAdmitted = slots.admit(fourth)
        #expect(!fourthAdmitted)
        let elsewhereAdmitted = slots.admit(elsewhere)
        #expect(elsewhereAdmitted)
        // A waiting transfer that ended while it waited is passed over.
        _ = third.state.start()
        _ = third.state.cancel()
        let startedEarly = slots.nextToStart(for: HostSlots.originKey(of: "http://127.0.0.1:8080")!)
        #expect(startedEarly == nil)
        let origin = slots.release(first)
        #expect(origin == HostSlots.originKey(of: "http://127.0.0.1:8080"))
        let startedNext = slots.nextToStart(for: HostSlots.originKey(of: "http://127.0.0.1:8080")!)
        #expect(startedNext === fourth)
        let startedBeyondTheLimit = slots.nextToStart(for: HostSlots.originKey(of: "http://127.0.0.1:8080")!)
        #expect(startedBeyondTheLimit == nil)
        let releasedTwice = slots.release(first)
        #expect(releasedTwice == nil)   // a slot is given back once
    }

    @Test func aHostThatMultiplexesTakesAConnectionsWorthOfStreams() {
        var slots = HostSlots(perHost: 1, streamsPerConnection: 3)
        let transfers = (0..<5).map { _ in transfer("https://127.0.0.1:8443/") }
        let firstStreamAdmitted = slots.admit(transfers[0])
        #expect(firstStreamAdmitted)
        for waiting in transfers.dropFirst() {
            let admitted = slots.admit(waiting)
            #expect(!admitted)
        }
        let multiplexingOrigin = slots.noteMultiplexing(of: transfers[0])
        #expect(multiplexingOrigin == HostSlots.originKey(of: "https://127.0.0.1:8443"))
        let secondStream = slots.nextToStart(for: HostSlots.originKey(of: "https://127.0.0.1:8443")!)
        #expect(secondStream === transfers[1])
        let thirdStream = slots.nextToStart(for: HostSlots.originKey(of: "https://127.0.0.1:8443")!)
        #expect(thirdStream === transfers[2])
        let fourthStream = slots.nextToStart(for: HostSlots.originKey(of: "https://127.0.0.1:8443")!)
        #expect(fourthStream == nil)
        let stillWaiting = slots.removeAllWaiting().map(ObjectIdentifier.init)
        #expect(stillWaiting == transfers.suffix(2).map(ObjectIdentifier.init))
    }

    /// Admits `count` transfers of one origin; returns them with whether each was admitted.
    private func admit(_ count: Int, to slots: inout HostSlots, url: String = "http://127.0.0.1:8080/a") -> [(Transfer, Bool)] {
        (0..<count).map { _ in
            let transfer = transfer(url)
            return (transfer, slots.admit(transfer))
        }
    }

    /// A per-host limit over 256 connections is split into lanes whose limits add up to it, each
    /// lane in a multi handle of its own; transfers fill the first lane with room, and a slot
    /// freed in a lane goes to the next waiting transfer in that same lane (its connection).
    @Test func aLargeHostLimitIsSplitIntoLanesInHandlesOfTheirOwn() {
        var slots = HostSlots(perHost: 601, streamsPerConnection: 100)
        #expect(slots.multiHandleCount == HostSlots.maxMultiHandles)
        #expect(slots.perHostInEachMultiHandle == 201)
        let admitted = admit(602, to: &slots)
        let firstAllAdmitted = admitted.prefix(601).allSatisfy { $0.1 }
        #expect(firstAllAdmitted)
        #expect(!admitted[601].1)
        // 201, 200 and 200: the remainder goes to the first lanes.
        let lanes = admitted.prefix(601).map(\.0.slotLane)
        #expect(lanes == Array(repeating: 0, count: 201) + Array(repeating: 1, count: 200) + Array(repeating: 2, count: 200))
        let handles = Set(admitted.prefix(601).map { slots.multiHandle(of: $0.0) })
        #expect(handles.count == 3)
        #expect(handles.allSatisfy { $0 >= 0 && $0 < slots.multiHandleCount })

        let inSecondLane = admitted[300].0
        let handle = slots.multiHandle(of: inSecondLane)
        let origin = slots.release(inSecondLane)
        #expect(origin != nil)
        let next = origin.flatMap { slots.nextToStart(for: $0) }
        #expect(next === admitted[601].0)
        #expect(next?.slotLane == 1)
        #expect(next.map { slots.multiHandle(of: $0) } == handle)
    }

    /// Without a per-host limit nothing waits: 256 transfers to a lane, and the last lane takes
    /// whatever the others cannot.
    @Test func withoutALimitNothingWaitsAndLanesStillSpreadTheLoad() {
        var slots = HostSlots(perHost: nil, streamsPerConnection: 100)
        #expect(slots.perHostInEachMultiHandle == nil)
        let admitted = admit(5_000, to: &slots)
        let allAdmitted = admitted.allSatisfy { $0.1 }
        #expect(allAdmitted)
        #expect(admitted.filter { $0.0.slotLane == 0 }.count == HostSlots.connectionsPerLane)
        #expect(admitted.filter { $0.0.slotLane == HostSlots.maxMultiHandles - 1 }.count == 5_000 - 15 * HostSlots.connectionsPerLane)
        #expect(Set(admitted.map { slots.multiHandle(of: $0.0) }).count == HostSlots.maxMultiHandles)
    }

    /// With a total connection cap (or a fixed cache size), which libcurl counts per multi handle,
    /// everything stays in one handle and one lane.
    @Test func oneMultiHandleWhenLibcurlMustCountEveryConnection() {
        var slots = HostSlots(perHost: 600, streamsPerConnection: 100, oneMultiHandle: true)
        #expect(slots.multiHandleCount == 1)
        #expect(slots.perHostInEachMultiHandle == 600)
        let admitted = admit(601, to: &slots)
        let allInTheOneLaneAndHandle = admitted.prefix(600).allSatisfy { $0.1 && $0.0.slotLane == 0 && slots.multiHandle(of: $0.0) == 0 }
        #expect(allInTheOneLaneAndHandle)
        #expect(!admitted[600].1)
    }

    /// Origins are spread over the handles, each origin's first lane in one handle.
    @Test func originsAreSpreadOverTheHandles() {
        var slots = HostSlots(perHost: 8, streamsPerConnection: 100)
        var handles = Set<Int>()
        for port in 8000..<8064 {
            let (transfer, admitted) = admit(1, to: &slots, url: "http://127.0.0.1:\(port)/")[0]
            #expect(admitted && transfer.slotLane == 0)
            handles.insert(slots.multiHandle(of: transfer))
        }
        #expect(handles.count > 1)
    }
}
