/// Loads that run one after another, each built from the one before — typed end to end.
///
/// ```swift
/// let chain = APIChain(goodsList, parameters: ["page": 1])
///     .then(goodsDetail) { page in
///         page.content.items.first.map { ["id": .integer($0.id)] }   // nil stops the chain
///     }
/// switch await chain.load() {
/// case .finished(let detail): print(detail.content.title)
/// case .stopped(let step): print("nothing to look at; step \(step) did not run")
/// case .failed(let step, let error): print("step \(step) failed: \(error)")
/// }
/// ```
///
/// Each step runs its manager's whole pipeline, as the manager's async face does (its delegate
/// is not told). A step's builder may stop the chain by returning `nil`. The chain is one load
/// of its own in the first manager's proxy: cancelling its ID, its group or the calling task
/// cancels the step under way and starts no other. A chain is a value: build it once, run it
/// as often as needed.
public struct APIChain<Last: Decodable & Sendable>: Sendable {
    /// How far a run got.
    enum Progress: Sendable {
        case reached(APIResponse<Last>)
        case ended(ChainEnding)
    }

    private let proxy: APIProxy
    /// The group the chain's own entry joins.
    public let group: APIProxy.LoadGroup?
    /// How many steps the chain has.
    public let steps: Int
    private let run: @Sendable () async -> Progress

    /// Starts a chain with its first load.
    ///
    /// - Parameters:
    ///   - manager: The first step's manager; the chain is entered in its proxy.
    ///   - parameters: Its parameters.
    ///   - group: A group for the chain's entry in the proxy; none by default.
    public init(_ manager: APIManager<Last>, parameters: Parameters = [:], group: APIProxy.LoadGroup? = nil) {
        proxy = manager.proxy
        self.group = group
        steps = 1
        run = { await Self.step(1, manager, parameters) }
    }

    private init(proxy: APIProxy, group: APIProxy.LoadGroup?, steps: Int, run: @escaping @Sendable () async -> Progress) {
        self.proxy = proxy
        self.group = group
        self.steps = steps
        self.run = run
    }

    /// Adds a step after the last.
    ///
    /// - Parameters:
    ///   - manager: The step's manager.
    ///   - parameters: Makes the step's parameters from the previous step's response, or
    ///     returns `nil` to stop the chain there.
    /// - Returns: The longer chain.
    public func then<Next>(_ manager: APIManager<Next>, parameters: @escaping @Sendable (APIResponse<Last>) async -> Parameters?) -> APIChain<Next> {
        let previous = run
        let number = steps + 1
        return APIChain<Next>(proxy: proxy, group: group, steps: number) {
            switch await previous() {
            case .ended(let ending):
                return .ended(ending)
            case .reached(let response):
                guard !Task.isCancelled else {
                    return .ended(.failed(step: number, APIError(
                        .cancelled, loadID: response.loadID, service: manager.serviceName, path: manager.path,
                        message: "the chain was cancelled before step \(number)")))
                }
                guard let next = await parameters(response) else { return .ended(.stopped(step: number)) }
                return await APIChain<Next>.step(number, manager, next)
            }
        }
    }

    /// Runs one step's load.
    private static func step(_ number: Int, _ manager: APIManager<Last>, _ parameters: Parameters) async -> Progress {
        do throws(APIError) {
            return .reached(try await manager.load(parameters))
        } catch {
            return .ended(.failed(step: number, error))
        }
    }

    /// Runs the chain and returns how it ended. Cancelling the calling task cancels the step
    /// under way (the outcome is then that step's ``APIError/Kind/cancelled`` failure).
    public func load() async -> Outcome {
        let run = run
        let (_, outcome, _) = await CompositeLoad.run(proxy: proxy, group: group) { _ in Outcome(await run()) }
        return outcome
    }

    /// Starts the chain and returns its ID at once; the delegate hears how it ended on
    /// `executor` — unless it is cancelled (by its ID, its group, or the proxy), which cancels
    /// the step under way and tells no one.
    ///
    /// - Parameters:
    ///   - delegate: Told once; held weakly.
    ///   - executor: Where the delegate is called; the main actor by default.
    /// - Returns: The chain's ID, to cancel it through the proxy.
    @discardableResult
    public func start(delegate: any APIChainDelegate, on executor: CallbackExecutor = .mainActor) -> LoadID {
        weak let delegate = delegate
        let run = run
        return CompositeLoad.start(proxy: proxy, group: group, executor: executor) { _ in Outcome(await run()) } deliver: { outcome in
            delegate?.chain(didFinishWith: outcome)
        }
    }
}

extension APIChain {
    /// How a chain ended.
    public enum Outcome: Sendable {
        /// Every step succeeded: the last one's response.
        case finished(APIResponse<Last>)
        /// The builder of this step (numbered from 1) returned `nil`: it and the steps after it
        /// did not run.
        case stopped(step: Int)
        /// This step's load failed (or was cancelled); the steps after it did not run.
        case failed(step: Int, APIError)

        init(_ progress: Progress) {
            switch progress {
            case .reached(let response): self = .finished(response)
            case .ended(.stopped(let step)): self = .stopped(step: step)
            case .ended(.failed(let step, let error)): self = .failed(step: step, error)
            }
        }

        /// The last step's response, if the chain finished.
        public var response: APIResponse<Last>? {
            if case .finished(let response) = self { response } else { nil }
        }
    }
}

/// How a chain ended before its last step, whatever the types of the steps.
enum ChainEnding: Sendable {
    case stopped(step: Int)
    case failed(step: Int, APIError)
}

/// Hears how a chain started with ``APIChain/start(delegate:on:)`` ended.
public protocol APIChainDelegate: AnyObject, Sendable {
    /// The chain ended (it was not cancelled).
    ///
    /// - Parameter outcome: How.
    func chain<Last>(didFinishWith outcome: APIChain<Last>.Outcome)
}
