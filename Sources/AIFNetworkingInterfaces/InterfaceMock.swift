@_spi(CrossModule) import AIFTransport
#if Interfaces
/// What a typed interface's generated mock (`ShopAPIMock`) keeps: an answer per method, and
/// the calls made, in order.
///
/// ```swift
/// let shop = ShopAPIMock()
/// shop.onGoodsId = { id in Goods(id: id, title: "Cup") }
/// let screen = DetailScreen(shop: shop)
/// await screen.show(42)
/// #expect(shop.calls.map(\.method) == ["goods(id:)"])
/// #expect(shop.calls[0]["id"] as? Int == 42)
/// ```
///
/// A call to a method without an answer fails with an ``/AIFNetworking/APIError`` of kind
/// ``/AIFNetworking/APIError/Kind-swift.struct/configuration`` that names the method and the
/// property to set; it is recorded all the same.
public final class InterfaceMock: Sendable {
    /// One call to the mock.
    public struct Call: Sendable, CustomStringConvertible {
        /// The method, with its labels: `goods(id:)`.
        public let method: String
        /// The arguments, in order, by their names in the declaration.
        public let arguments: [(name: String, value: any Sendable)]

        /// The argument named `name`, `nil` when there is none.
        public subscript(name: String) -> (any Sendable)? {
            arguments.first { $0.name == name }?.value
        }

        /// `goods(id: 42)`.
        public var description: String {
            let base = method.prefix { $0 != "(" }
            return "\(base)(" + arguments.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + ")"
        }
    }

    private struct State {
        var calls: [Call] = []
        var answers: [String: any Sendable] = [:]
    }

    /// The interface's name (`ShopAPI`), for errors.
    public let interface: String
    private let state = Locked(State())

    /// A mock of `interface` with no answers and no calls.
    ///
    /// - Parameter interface: The protocol's name.
    public init(interface: String) {
        self.interface = interface
    }

    /// Every call so far, in order.
    public var calls: [Call] {
        state.withLock { $0.calls }
    }

    /// The calls to one method (`goods(id:)`), in order.
    ///
    /// - Parameter method: The method, with its labels.
    /// - Returns: Its calls.
    public func calls(to method: String) -> [Call] {
        state.withLock { $0.calls.filter { $0.method == method } }
    }

    /// Forgets the calls, keeping the answers.
    public func forgetCalls() {
        state.withLock { $0.calls.removeAll() }
    }

    /// Records a call.
    ///
    /// - Parameters:
    ///   - method: The method, with its labels.
    ///   - arguments: Its arguments.
    public func record(_ method: String, _ arguments: [(name: String, value: any Sendable)]) {
        state.withLock { $0.calls.append(Call(method: method, arguments: arguments)) }
    }

    /// The answer set for a method, `nil` when there is none.
    ///
    /// - Parameter method: The method, with its labels.
    /// - Returns: Its answer.
    public func answer<Answer: Sendable>(for method: String, as type: Answer.Type = Answer.self) -> Answer? {
        state.withLock { $0.answers[method] } as? Answer
    }

    /// Sets (or, with `nil`, removes) the answer of a method.
    ///
    /// - Parameters:
    ///   - answer: The answer.
    ///   - method: The method, with its labels.
    public func setAnswer(_ answer: (any Sendable)?, for method: String) {
        state.withLock { $0.answers[method] = answer }
    }

    /// The error a call to a method without an answer fails with.
    ///
    /// - Parameters:
    ///   - method: The method, with its labels.
    ///   - property: The mock's property that answers it.
    /// - Returns: The error.
    public func unanswered(_ method: String, property: String) -> APIError {
        APIError(
            .configuration, loadID: LoadID(rawValue: 0), service: ServiceName(rawValue: interface), path: method,
            message: "\(interface)Mock has no answer for \(method): set its \(property)")
    }
}
#endif
