@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

@Suite("Shared instances: set up before first use")
struct SharedInstanceTests {
    @Test func configuredBeforeFirstUseThenFixed() throws {
        let made = Locked(0)
        let shared = SharedInstance<String>("Example.shared") {
            made.withLock { $0 += 1 }
            return "default"
        }
        try shared.configure { "configured" }
        try shared.configure { "configured again" }
        #expect(made.withLock { $0 } == 0, "nothing is made before first use")
        #expect(shared.value == "configured again")
        #expect(shared.value == "configured again")
        let error = #expect(throws: CurlTransport.SharedInstanceError.self) { try shared.configure { "too late" } }
        #expect(error?.name == "Example.shared")
        #expect(error?.description.contains("before the first request") == true)
        #expect(shared.value == "configured again")
    }

    @Test func theDefaultIsMadeOnceUnderContention() async {
        let made = Locked(0)
        let shared = SharedInstance<Int>("Counter.shared") { made.withLock { $0 += 1; return $0 } }
        let values = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<64 { group.addTask { shared.value } }
            return await group.reduce(into: Set<Int>()) { $0.insert($1) }
        }
        #expect(values == [1])
        #expect(made.withLock { $0 } == 1)
    }

    /// Once the library's shared transport and proxy are in use, configuring them is refused
    /// with an error that names them, and they stay as they were.
    @Test func thePublicSharedInstancesRefuseLateConfiguration() {
        let transport = CurlTransport.shared
        let transportError = #expect(throws: CurlTransport.SharedInstanceError.self) { try CurlTransport.configureShared(.init()) }
        #expect(transportError?.name == "CurlTransport.shared")
        #expect(CurlTransport.shared === transport)
        let proxy = APIProxy.shared
        let proxyError = #expect(throws: CurlTransport.SharedInstanceError.self) { try APIProxy.setShared(APIProxy(transport: transport)) }
        #expect(proxyError?.name == "APIProxy.shared")
        #expect(APIProxy.shared === proxy)
    }
}
