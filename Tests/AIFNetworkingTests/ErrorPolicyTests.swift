@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

/// Error policies against the demo shop: its coupons route answers 200 `{"code": 4001,
/// "message": "coupon expired"}` for any code but `WELCOME10`, and `goods/{id}` 404 for an
/// unknown id.
@Suite("Error policies: retry, refresh, or an app handler told once")
struct ErrorPolicyTests {
    struct Coupon: Decodable, Sendable {
        var code: Int
    }

    /// A stack whose `shop` service has these policies (the config's JSON for `errorPolicies`).
    static func stack(policies: String) async throws -> ShopStack {
        let stack = try await ShopStack.make()
        var text = try String(contentsOf: ShopServers.configs.appending(path: "shop.json"), encoding: .utf8)
        text = text.replacingOccurrences(of: #""retry": {"#, with: #""errorPolicies": \#(policies), "retry": {"#)
        let environment = [
            "SHOP_ONLINE_URL": stack.servers.online.baseURL().absoluteString, "SHOP_OFFLINE_URL": stack.servers.offline.baseURL().absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey, "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ]
        stack.registry.register(try ServiceRegistry.ConfiguredService.parse(Data(text.utf8), file: "shop.json", environment: environment))
        return stack
    }

    func loads<Content: Decodable & Sendable>(_ count: Int, of path: String, _ content: Content.Type, on stack: ShopStack) async -> [APIError] {
        await withTaskGroup(of: APIError?.self) { group in
            for _ in 0..<count {
                let manager = stack.manager(path, content)
                group.addTask {
                    do throws(APIError) {
                        _ = try await manager.load()
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            var errors: [APIError] = []
            for await error in group { if let error { errors.append(error) } }
            return errors
        }
    }

    @Test func aHandlerHearsABurstOfTheSameCodeOnce() async throws {
        let stack = try await Self.stack(policies: #"{"codes": {"4001": "handler:couponExpired"}}"#)
        let heard = Locked<[ErrorPolicies.Event]>([])
        stack.registry.setErrorHandler("couponExpired") { event in heard.withLock { $0.append(event) } }
        let errors = await loads(50, of: "coupons/SPRING", Coupon.self, on: stack)
        #expect(errors.count == 50)
        #expect(errors.allSatisfy { $0.kind == .serviceVeto && $0.serviceVeto?.code == "4001" })
        let events = heard.withLock { $0 }
        #expect(events.count == 1)
        #expect(events.first?.code == "4001")
        #expect(events.first?.message == "coupon expired")
        #expect(events.first?.service == "shop")
    }

    @Test func aHandlerForAStatus() async throws {
        let stack = try await Self.stack(policies: #"{"statuses": {"404": "handler:missing"}}"#)
        let heard = Locked(0)
        stack.registry.setErrorHandler("missing") { _ in heard.withLock { $0 += 1 } }
        let errors = await loads(10, of: "goods/5000", NoContent.self, on: stack)
        #expect(errors.count == 10)
        #expect(errors.allSatisfy { $0.statusCode == 404 })
        #expect(heard.withLock { $0 } == 1)
    }

    @Test func aCodeMappedToRetryIsRetriedAsThePolicyAllows() async throws {
        let stack = try await Self.stack(policies: #"{"codes": {"4001": "retry"}}"#)
        let manager = stack.manager("coupons/SPRING", Coupon.self) { settings in
            var settings = settings
            settings.retryPolicy = RetryPolicy(baseDelay: .milliseconds(10))
            return settings
        }
        let error = await #expect(throws: APIError.self) { try await manager.load() }
        #expect(error?.kind == .serviceVeto)
        #expect(error?.attempts == 3)
        #expect(stack.transport.sent == 3)
    }

    @Test func aCodeMappedToRefreshRefreshesTheCredential() async throws {
        let shop = try await TokenShop.make(errorPolicies: #"{"codes": {"4011": "refreshCredentials"}}"#)
        _ = try await shop.signIn()
        shop.tokens.expireAll()
        let response = try await shop.account(path: "account-in-body").load()
        #expect(response.attempts == 2)
        #expect(shop.tokens.refreshAttempts == 2)
        await shop.stop()
    }

    @Test func theConfigKeyIsReadAndBadValuesAreNamed() throws {
        func parse(_ policies: String) throws(ServiceRegistry.ConfigurationError) -> ErrorPolicies? {
            let json = #"{"name": "s", "environments": {"online": {"baseURL": "https://api.example"}}, "errorPolicies": \#(policies)}"#
            return try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "s.json", environment: [:]).errorPolicies
        }
        let policies = try parse(
            #"{"codes": {"4011": "refreshCredentials", "5030": "retry", "1": "surface", "4012": "correctClock"}, "statuses": {"426": "handler:upgrade"}}"#)
        #expect(policies == ErrorPolicies(
            codes: ["4011": .refreshCredentials, "5030": .retry, "1": .surface, "4012": .correctClock], statuses: [426: .handler("upgrade")]))
        for (bad, key) in [
            (#"{"codes": {"4011": "refresh"}}"#, "errorPolicies.codes.4011"),
            (#"{"statuses": {"4xx": "retry"}}"#, "errorPolicies.statuses.4xx"),
            (#"{"statuses": {"426": "handler:"}}"#, "errorPolicies.statuses.426"),
            (#"{"status": {}}"#, "errorPolicies.status"),
        ] {
            #expect(throws: ServiceRegistry.ConfigurationError.self) { _ = try parse(bad) }
            do {
                _ = try parse(bad)
            } catch {
                #expect(error.key == key, "\(bad)")
            }
        }
    }

    @Test func handlersAreToldOncePerQuietPeriod() {
        let handlers = ErrorHandlers(quietPeriod: .seconds(5))
        let heard = Locked(0)
        handlers.set("h") { _ in heard.withLock { $0 += 1 } }
        let event = ErrorPolicies.Event(handler: "h", service: "s", environment: .online, statusCode: 426, code: nil, message: nil)
        let start = Duration.seconds(100)
        for second in 0..<8 { handlers.tell(event, now: start + .seconds(second)) }
        #expect(heard.withLock { $0 } == 1)
        handlers.tell(event, now: start + .seconds(14))
        #expect(heard.withLock { $0 } == 2)
        var other = event
        other.statusCode = 503
        handlers.tell(other, now: start + .seconds(14))
        #expect(heard.withLock { $0 } == 3)
        #expect(!handlers.tell(ErrorPolicies.Event(handler: "nobody", service: "s", environment: .online, statusCode: 1, code: nil, message: nil), now: .zero))
    }
}
