@_spi(CrossModule) import AIFTransport
/// Several loads — any managers, any content types — started together and finished when all
/// have ended, with each one's result in the order they were added.
///
/// ```swift
/// let batch = APIBatch(failFast: true)
/// let detail = batch.add(goodsDetail, parameters: ["id": 7])
/// let firstPage = batch.add(goodsList, parameters: ["page": 1])
/// let outcome = await batch.load()
/// if outcome.succeeded {
///     let goods = try outcome.result(of: detail).get().content
///     let page = try outcome.result(of: firstPage).get().content
/// }
/// ```
///
/// Each member runs its manager's whole pipeline (service, signing, retries, cache, hooks) as
/// the manager's async face does; the managers' delegates are not told — the batch's result,
/// or its delegate, is. The batch is one load of its own in the proxy: ``APIProxy/cancel(_:)-(LoadID)``
/// with its ID (or its group) cancels every member still running. With `failFast`, the first
/// member to fail (other than by cancellation) cancels the rest.
///
/// A batch can be run more than once; the members are the same each time.
public final class APIBatch: Sendable {
    /// A member of a batch: a typed key to its result in a ``APIBatch/Outcome``.
    public struct Member<Content: Decodable & Sendable>: Sendable {
        /// Its place in the batch, from 0.
        public let index: Int
        fileprivate let batch: ObjectIdentifier
    }

    private typealias MemberLoad = @Sendable () async -> Result<any Sendable, APIError>

    /// Whether the first failure cancels the members still running.
    public let failFast: Bool
    /// The proxy the batch is entered in (its members' loads go through their own managers').
    public let proxy: APIProxy
    /// The group the batch's own entry joins, to cancel it with others.
    public let group: APIProxy.LoadGroup?
    private let members = Locked<[MemberLoad]>([])

    /// Creates an empty batch.
    ///
    /// - Parameters:
    ///   - failFast: Whether the first failure cancels the rest; no by default.
    ///   - group: A group for the batch's entry in the proxy; none by default.
    ///   - proxy: Where the batch is entered; ``APIProxy/shared`` by default.
    public init(failFast: Bool = false, group: APIProxy.LoadGroup? = nil, proxy: APIProxy = .shared) {
        self.failFast = failFast
        self.group = group
        self.proxy = proxy
    }

    /// Adds a load.
    ///
    /// - Parameters:
    ///   - manager: The manager to load with.
    ///   - parameters: The parameters of its load (the manager's param source is not asked).
    /// - Returns: The member, to find its result in the outcome.
    @discardableResult
    public func add<Content>(_ manager: APIManager<Content>, parameters: Parameters = [:]) -> Member<Content> {
        let load: MemberLoad = {
            do throws(APIError) {
                return .success(try await manager.load(parameters))
            } catch {
                return .failure(error)
            }
        }
        let index = members.withLock { members in
            members.append(load)
            return members.count - 1
        }
        return Member(index: index, batch: ObjectIdentifier(self))
    }

    /// How many members the batch has.
    public var count: Int {
        members.withLock { $0.count }
    }

    /// Runs every member and returns when all have ended. Cancelling the calling task cancels
    /// them (their results are then ``APIError/Kind/cancelled``).
    public func load() async -> Outcome {
        let (id, results, _) = await CompositeLoad.run(proxy: proxy, group: group) { [self] _ in await runMembers() }
        return Outcome(id: id, batch: ObjectIdentifier(self), results: results)
    }

    /// Starts every member and returns the batch's ID at once; the delegate hears the outcome
    /// on `executor` when all have ended — unless the batch is cancelled (by its ID, its group,
    /// or the proxy), which cancels the members and tells no one.
    ///
    /// - Parameters:
    ///   - delegate: Told once; held weakly.
    ///   - executor: Where the delegate is called; the main actor by default.
    /// - Returns: The batch's ID, to cancel it through the proxy.
    @discardableResult
    public func start(delegate: any Delegate, on executor: CallbackExecutor = .mainActor) -> LoadID {
        weak let delegate = delegate
        let batch = ObjectIdentifier(self)
        return CompositeLoad.start(proxy: proxy, group: group, executor: executor) { [self] id in
            Outcome(id: id, batch: batch, results: await runMembers())
        } deliver: { [self] outcome in
            delegate?.batch(self, didFinishWith: outcome)
        }
    }

    private func runMembers() async -> [Result<any Sendable, APIError>] {
        let loads = members.withLock { $0 }
        let failFast = failFast
        return await withTaskGroup(of: (Int, Result<any Sendable, APIError>).self) { group in
            for (index, load) in loads.enumerated() {
                group.addTask { (index, await load()) }
            }
            var results = [Result<any Sendable, APIError>?](repeating: nil, count: loads.count)
            for await (index, result) in group {
                results[index] = result
                if failFast, case .failure(let error) = result, error.kind != .cancelled {
                    group.cancelAll()
                }
            }
            // Every task of the group reported: each slot is filled.
            return results.map { $0! }
        }
    }
}

extension APIBatch {
    /// How a batch ended: each member's result, in the order they were added.
    public struct Outcome: Sendable {
        /// The batch's ID in the proxy for this run.
        public let id: LoadID
        private let batch: ObjectIdentifier
        private let results: [Result<any Sendable, APIError>]

        fileprivate init(id: LoadID, batch: ObjectIdentifier, results: [Result<any Sendable, APIError>]) {
            self.id = id
            self.batch = batch
            self.results = results
        }

        /// A member's result.
        ///
        /// - Parameter member: A member of this batch.
        /// - Returns: Its response or its error; a ``APIError/Kind/configuration`` error for a member
        ///   of another batch.
        public func result<Content>(of member: APIBatch.Member<Content>) -> Result<APIResponse<Content>, APIError> {
            guard member.batch == batch, results.indices.contains(member.index) else {
                return .failure(APIError(.configuration, loadID: id, service: ServiceName(""), path: "", message: "member \(member.index) is not a member of this batch"))
            }
            switch results[member.index] {
            case .success(let response as APIResponse<Content>): return .success(response)
            case .success(let other):
                return .failure(APIError(
                    .configuration, loadID: id, service: ServiceName(""), path: "",
                    message: "member \(member.index) holds \(type(of: other)), not APIResponse<\(Content.self)>"))
            case .failure(let error): return .failure(error)
            }
        }

        /// Each member's error, or `nil` where it succeeded, in order.
        public var errors: [APIError?] {
            results.map { if case .failure(let error) = $0 { error } else { nil } }
        }

        /// The members' errors, in member order.
        public var failures: [APIError] {
            errors.compactMap { $0 }
        }

        /// Whether every member succeeded.
        public var succeeded: Bool {
            failures.isEmpty
        }

        /// How many members the batch had.
        public var count: Int {
            results.count
        }
    }

    /// Hears how a batch started with ``APIBatch/start(delegate:on:)`` ended.
    public protocol Delegate: AnyObject, Sendable {
        /// Every member has ended (the batch was not cancelled).
        ///
        /// - Parameters:
        ///   - batch: The batch.
        ///   - outcome: Each member's result.
        func batch(_ batch: APIBatch, didFinishWith outcome: Outcome)
    }
}
