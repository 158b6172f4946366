@testable import AIFServices
import Foundation
import Testing

/// The circuit's decisions as a value, told the time: every transition without a socket or
/// real time.
@Suite("Circuit breaker: its decisions")
struct CircuitBreakerTests {
    private typealias Machine = CircuitBreaker.Machine

    private static let policy = CircuitBreaker.Policy(failuresToOpen: 3, coolDown: .seconds(30), probes: 2)

    @Test func aRunOfFailuresOpensTheCircuitAndAnyOtherAnswerEndsTheRun() {
        var machine = Machine(Self.policy)
        #expect(machine.record(.failure, probe: false, at: .seconds(1)) == nil)
        #expect(machine.record(.failure, probe: false, at: .seconds(2)) == nil)
        // A success ends the run; what says nothing of the backend does not.
        #expect(machine.record(.success, probe: false, at: .seconds(3)) == nil)
        #expect(machine.record(.failure, probe: false, at: .seconds(4)) == nil)
        #expect(machine.record(.neither, probe: false, at: .seconds(5)) == nil)
        #expect(machine.record(.failure, probe: false, at: .seconds(6)) == nil)
        #expect(machine.state == .closed)
        #expect(machine.admit(at: .seconds(6)).0 == .send)
        let opened = machine.record(.failure, probe: false, at: .seconds(10))
        #expect(opened == CircuitBreaker.Change(from: .closed, to: .open, failures: 3, openFor: .seconds(30)))
        #expect(machine.state == .open)
    }

    @Test func anOpenCircuitRefusesUntilItsCoolDownThenLetsTheProbesOut() {
        var machine = Self.opened(at: .seconds(10))
        #expect(machine.admit(at: .seconds(10)).0 == .refuse(nextProbeIn: .seconds(30)))
        #expect(machine.admit(at: .seconds(39)).0 == .refuse(nextProbeIn: .seconds(1)))
        #expect(machine.isOpen(at: .seconds(39)) == .seconds(1))
        // An answer to a request sent before it opened changes nothing.
        #expect(machine.record(.success, probe: false, at: .seconds(20)) == nil)
        #expect(machine.state == .open)

        let (first, change) = machine.admit(at: .seconds(40))
        #expect(first == .probe)
        #expect(change == CircuitBreaker.Change(from: .open, to: .halfOpen, failures: 0))
        #expect(machine.isOpen(at: .seconds(40)) == nil)
        #expect(machine.admit(at: .seconds(40)) == (.probe, nil))
        // Two probes out: the next request waits for them.
        #expect(machine.admit(at: .seconds(41)).0 == .refuse(nextProbeIn: nil))
    }

    @Test func everyProbeSucceedingClosesTheCircuit() {
        var machine = Self.opened(at: .zero)
        _ = machine.admit(at: .seconds(30))
        _ = machine.admit(at: .seconds(30))
        #expect(machine.record(.success, probe: true, at: .seconds(31)) == nil)
        #expect(machine.state == .halfOpen)
        // A request that was not a probe (sent before the circuit opened) tells nothing.
        #expect(machine.record(.failure, probe: false, at: .seconds(31)) == nil)
        #expect(machine.record(.success, probe: true, at: .seconds(32)) == CircuitBreaker.Change(from: .halfOpen, to: .closed, failures: 0))
        #expect(machine.admit(at: .seconds(32)).0 == .send)
        // Closed afresh: it takes a whole run to open again.
        #expect(machine.record(.failure, probe: false, at: .seconds(33)) == nil)
        #expect(machine.state == .closed)
    }

    @Test func aFailedProbeOpensTheCircuitForAnotherCoolDown() {
        var machine = Self.opened(at: .zero)
        _ = machine.admit(at: .seconds(30))
        let reopened = machine.record(.failure, probe: true, at: .seconds(35))
        #expect(reopened == CircuitBreaker.Change(from: .halfOpen, to: .open, failures: 1, openFor: .seconds(30)))
        #expect(machine.admit(at: .seconds(36)).0 == .refuse(nextProbeIn: .seconds(29)))
        #expect(machine.admit(at: .seconds(65)).0 == .probe)
    }

    @Test func aProbeThatSaysNothingGivesItsPlaceToTheNextRequest() {
        var machine = Machine(CircuitBreaker.Policy(failuresToOpen: 1, coolDown: .seconds(5), probes: 1))
        _ = machine.record(.failure, probe: false, at: .zero)
        #expect(machine.admit(at: .seconds(5)).0 == .probe)
        #expect(machine.admit(at: .seconds(5)).0 == .refuse(nextProbeIn: nil))
        // Cancelled: neither a success nor a failure.
        #expect(machine.record(.neither, probe: true, at: .seconds(6)) == nil)
        #expect(machine.state == .halfOpen)
        #expect(machine.admit(at: .seconds(6)).0 == .probe)
    }

    @Test func thePolicySaysWhichOutcomesCount() {
        let url = URL(string: "https://backend.test/v1/goods")!
        func status(_ code: Int) -> Result<HTTPResponse, any Error> {
            .success(HTTPResponse(statusCode: code, headers: HTTPHeaders(), body: Data(), url: url))
        }
        func failure(_ code: TransportError.Code) -> Result<HTTPResponse, any Error> {
            .failure(TransportError(code, url: url.absoluteString, detail: "test"))
        }
        let all = CircuitBreaker.Policy()
        #expect(all.verdict(on: status(200)) == .success)
        #expect(all.verdict(on: status(404)) == .success)
        #expect(all.verdict(on: status(503)) == .failure)
        #expect(all.verdict(on: status(501)) == .success)
        #expect(all.verdict(on: failure(.connectTimeout)) == .failure)
        #expect(all.verdict(on: failure(.connectionRefused)) == .failure)
        #expect(all.verdict(on: failure(.responseLost)) == .failure)
        #expect(all.verdict(on: failure(.cancelled)) == .neither)
        #expect(all.verdict(on: .failure(CancellationError())) == .neither)

        let timeoutsOnly = CircuitBreaker.Policy(counted: [.timeout])
        #expect(timeoutsOnly.verdict(on: status(503)) == .success)
        #expect(timeoutsOnly.verdict(on: failure(.connectionRefused)) == .neither)
        #expect(timeoutsOnly.verdict(on: failure(.totalTimeout)) == .failure)
    }

    private static func opened(at now: Duration) -> Machine {
        var machine = Machine(policy)
        for _ in 1...3 { _ = machine.record(.failure, probe: false, at: now) }
        return machine
    }
}
