public import Foundation
@_spi(CrossModule) import AIFTransport

/// Where services are registered and resolved by name, and which environment each one uses.
///
/// Thread-safe. Switching an environment affects requests generated afterwards; requests
/// already generated (and in flight) keep the environment they started with, because
/// ``resolve(_:)`` hands out a snapshot.
///
/// The active environment of a service is, in order: the one set for that service with
/// ``setEnvironment(_:for:)``; the one set for all with ``setEnvironment(_:)``; the
/// `AIF_ENVIRONMENT` environment variable (so a binary can be pointed at staging without a
/// rebuild); the service's own ``Service/defaultEnvironment``.
public final class ServiceRegistry: Sendable {
    /// The process-wide registry.
    public static let shared = ServiceRegistry()

    enum Entry {
        case instance(any Service)
        case factory(@Sendable () -> any Service)
        /// A service whose declarations cannot work: every use of it fails with this.
        case refused(ServiceError)

        /// Whether the entry holds a service made (or refused), not a factory.
        var isMade: Bool {
            if case .factory = self { false } else { true }
        }

        /// The entry of `service`: refused when what it declares cannot work, checked once,
        /// as it is registered (or made by its factory).
        init(checking service: any Service) {
            if let problem = service.applicationErrors?.problem {
                self = .refused(.invalidConfiguration(service: service.name, reason: "its applicationErrors rule is unsound: \(problem)"))
            } else {
                self = .instance(service)
            }
        }
    }

    struct State {
        var entries: [ServiceName: Entry] = [:]
        var globalEnvironment: ServiceEnvironment.Name?
        var serviceEnvironments: [ServiceName: ServiceEnvironment.Name] = [:]
        var authenticators: [ServiceName: Authenticator] = [:]
        /// Each service environment's server clock, learned from its responses.
        var clocks: [ServiceName: [ServiceEnvironment.Name: ClockSkew]] = [:]
        /// Each environment's circuit, made as it is first resolved with a policy (again when
        /// its policy changes).
        var circuits: [ServiceName: [ServiceEnvironment.Name: CircuitBreaker]] = [:]
        /// The APIs defined by name (see ServiceRegistry+Defines.swift).
        var defines: [String: APIDefine] = [:]
    }

    let state = Locked(State())
    private let environmentVariable: ServiceEnvironment.Name?
    /// The app's error handlers, which ``ErrorPolicies/Action/handler(_:)`` policies name.
    let errorHandlers = ErrorHandlers()

    /// Creates an empty registry.
    ///
    /// - Parameter processEnvironment: Where `AIF_ENVIRONMENT` is read; the process's by default.
    public init(processEnvironment: [String: String] = ProcessInfo.processInfo.environment) {
        environmentVariable = processEnvironment["AIF_ENVIRONMENT"].flatMap { $0.isEmpty ? nil : ServiceEnvironment.Name(rawValue: $0) }
    }

    /// Registers a service under its name, replacing any earlier one of that name.
    ///
    /// What the service declares is checked here: a service whose ``Service/applicationErrors``
    /// rule would refuse every answer is kept, but each use of it fails with
    /// ``ServiceError/invalidConfiguration(service:reason:)`` saying what is wrong.
    public func register(_ service: any Service) {
        let entry = Entry(checking: service)
        state.withLock { $0.entries[service.name] = entry }
    }

    /// Registers a factory, called once, on first use, to create the service named `name`.
    ///
    /// - Parameters:
    ///   - name: The name it is resolved by.
    ///   - factory: Creates the service.
    public func register(_ name: ServiceName, factory: @escaping @Sendable () -> any Service) {
        state.withLock { $0.entries[name] = .factory(factory) }
    }

    /// Removes a service.
    public func unregister(_ name: ServiceName) {
        state.withLock { $0.entries[name] = nil }
    }

    /// The registered names, sorted.
    public var registeredNames: [ServiceName] {
        state.withLock { $0.entries.keys.sorted() }
    }

    /// The service registered as `name`.
    ///
    /// - Throws: ``ServiceError/unknownService(_:known:)`` naming it and listing the known names;
    ///   ``ServiceError/invalidConfiguration(service:reason:)`` for a service whose declarations
    ///   cannot work.
    public func service(named name: ServiceName) throws(ServiceError) -> any Service {
        let entry = state.withLock { $0.entries[name] }
        switch entry {
        case .none:
            throw ServiceError.unknownService(name, known: registeredNames)
        case .instance(let service):
            return service
        case .refused(let error):
            throw error
        case .factory(let factory):
            // Called outside the lock, so a factory may use the registry itself.
            let made = Entry(checking: factory())
            let kept = state.withLock { state -> Entry in
                if let known = state.entries[name], known.isMade { return known }
                state.entries[name] = made
                return made
            }
            if case .refused(let error) = kept { throw error }
            guard case .instance(let service) = kept else { return try self.service(named: name) }
            return service
        }
    }

    /// Sets the environment of every service that has none of its own; `nil` clears it.
    public func setEnvironment(_ environment: ServiceEnvironment.Name?) {
        state.withLock { $0.globalEnvironment = environment }
    }

    /// Sets the environment of one service; `nil` clears it.
    public func setEnvironment(_ environment: ServiceEnvironment.Name?, for service: ServiceName) {
        state.withLock { $0.serviceEnvironments[service] = environment }
    }

    /// The environment `service` currently uses.
    public func activeEnvironment(of service: any Service) -> ServiceEnvironment.Name {
        state.withLock { activeEnvironment(of: service.name, defaulting: service.defaultEnvironment, in: $0) }
    }

    /// The rule of the type's comment: the service's own, the global one, `AIF_ENVIRONMENT`,
    /// the service's default.
    private func activeEnvironment(of service: ServiceName, defaulting fallback: ServiceEnvironment.Name, in state: State) -> ServiceEnvironment.Name {
        state.serviceEnvironments[service] ?? state.globalEnvironment ?? environmentVariable ?? fallback
    }

    /// Gives several services one ``Authenticator`` (they share one credential and its
    /// refresh), over their own (``Service/authenticator``, and their environments'
    /// ``ServiceEnvironment/authenticator``); `nil` removes it.
    ///
    /// - Parameters:
    ///   - authenticator: The authenticator, or `nil`.
    ///   - services: The services that use it.
    public func setAuthenticator(_ authenticator: Authenticator?, for services: [ServiceName]) {
        state.withLock { state in
            for service in services { state.authenticators[service] = authenticator }
        }
    }

    /// The service named `name` with its active environment, as a snapshot for one request.
    ///
    /// - Throws: ``ServiceError`` when the name or its active environment is unknown.
    public func resolve(_ name: ServiceName) throws(ServiceError) -> ResolvedService {
        let service = try service(named: name)
        let (environmentName, authenticator, clock) = state.withLock { state in
            let environmentName = activeEnvironment(of: name, defaulting: service.defaultEnvironment, in: state)
            let authenticator = state.authenticators.isEmpty ? nil : state.authenticators[name]
            return (environmentName, authenticator, Self.clock(of: name, environmentName, in: &state))
        }
        guard let environment = service.environments[environmentName] else {
            throw ServiceError.unknownEnvironment(environmentName, service: name, known: service.environments.keys.sorted())
        }
        let circuitBreaker = (environment.circuitBreaker ?? service.circuitBreaker).map { circuit(of: name, environmentName, $0) }
        return ResolvedService(
            service: service, environmentName: environmentName, environment: environment,
            authenticator: authenticator ?? environment.authenticator ?? service.authenticator, clockSkew: clock, errorHandlers: errorHandlers,
            circuitBreaker: circuitBreaker)
    }

    /// The circuit of a service environment, as the registry keeps it for every proxy; `nil`
    /// when it has no circuit breaking, or has not been resolved yet.
    ///
    /// - Parameters:
    ///   - service: The service.
    ///   - environment: One of its environments.
    /// - Returns: Its circuit.
    public func circuitBreaker(of service: ServiceName, in environment: ServiceEnvironment.Name) -> CircuitBreaker? {
        state.withLock { $0.circuits[service]?[environment] }
    }

    private func circuit(of service: ServiceName, _ environment: ServiceEnvironment.Name, _ policy: CircuitBreaker.Policy) -> CircuitBreaker {
        state.withLock { state in
            if let known = state.circuits[service]?[environment], known.policy == policy { return known }
            let made = CircuitBreaker(policy: policy)
            state.circuits[service, default: [:]][environment] = made
            return made
        }
    }

    /// Registers the handler an ``ErrorPolicies/Action/handler(_:)`` policy names (log out, show an
    /// upgrade prompt); `nil` removes it. It is called on the thread the load ends on, once per
    /// distinct event (handler, service environment, status, code): the repeats of a burst,
    /// and of the 5 seconds after the last of them, are not told again.
    ///
    /// - Parameters:
    ///   - name: The name policies use (`handler:upgradeRequired` in a config file).
    ///   - handler: Hears the event.
    public func setErrorHandler(_ name: String, _ handler: (@Sendable (ErrorPolicies.Event) -> Void)?) {
        errorHandlers.set(name, handler)
    }

    /// The clock of a service environment's server: one per environment, so that servers whose
    /// clocks differ (an online and an offline one, two backends) each keep their own
    /// correction, whichever proxy calls them.
    ///
    /// - Parameters:
    ///   - service: The service.
    ///   - environment: One of its environments.
    /// - Returns: The clock correction its requests are signed with.
    public func clockSkew(of service: ServiceName, in environment: ServiceEnvironment.Name) -> ClockSkew {
        state.withLock { Self.clock(of: service, environment, in: &$0) }
    }

    private static func clock(of service: ServiceName, _ environment: ServiceEnvironment.Name, in state: inout State) -> ClockSkew {
        if let clock = state.clocks[service]?[environment] { return clock }
        let clock = ClockSkew()
        state.clocks[service, default: [:]][environment] = clock
        return clock
    }
}

extension ServiceRegistry {
    /// A service together with the environment one request uses.
    public struct ResolvedService: Sendable {
        /// The service.
        public var service: any Service { members.service }
        /// The environment's name.
        public var environmentName: ServiceEnvironment.Name { members.environmentName }
        /// The environment.
        public var environment: ServiceEnvironment { members.environment }
        /// Supplies and refreshes the credential of its requests: the registry's for this service
        /// (``ServiceRegistry/setAuthenticator(_:for:)``), else the service's own, if any.
        public var authenticator: Authenticator? { members.authenticator }
        /// The environment's server clock, as learned from its `Date` headers: requests are
        /// signed with its correction.
        public var clockSkew: ClockSkew { members.clockSkew }
        /// The handlers of the registry it was resolved in, for ``ErrorPolicies/Action/handler(_:)``.
        package var errorHandlers: ErrorHandlers? { members.errorHandlers }
        /// The environment's circuit, when the service or the environment has a
        /// ``CircuitBreaker/Policy``: shared by every load of the environment.
        public var circuitBreaker: CircuitBreaker? {
            get { members.circuitBreaker }
            set {
                members = Members(
                    service: service, environmentName: environmentName, environment: environment, authenticator: authenticator,
                    clockSkew: clockSkew, errorHandlers: errorHandlers, circuitBreaker: newValue)
            }
        }

        /// Whether the environment's requests are signed: it has credentials and the service a signer.
        package var isSigned: Bool { environment.credentials != nil && service.signer != nil }

        /// The members, behind one reference that is never written through: a resolved service
        /// travels with each load (its plan, its request's closures, each attempt), and a copy of
        /// the members themselves counts a reference for each of them where this counts one.
        private var members: Members

        private final class Members: Sendable {
            let service: any Service
            let environmentName: ServiceEnvironment.Name
            let environment: ServiceEnvironment
            let authenticator: Authenticator?
            let clockSkew: ClockSkew
            let errorHandlers: ErrorHandlers?
            let circuitBreaker: CircuitBreaker?

            init(
                service: any Service, environmentName: ServiceEnvironment.Name, environment: ServiceEnvironment, authenticator: Authenticator?,
                clockSkew: ClockSkew, errorHandlers: ErrorHandlers?, circuitBreaker: CircuitBreaker?
            ) {
                self.service = service
                self.environmentName = environmentName
                self.environment = environment
                self.authenticator = authenticator
                self.clockSkew = clockSkew
                self.errorHandlers = errorHandlers
                self.circuitBreaker = circuitBreaker
            }
        }

        /// Creates a snapshot (the registry makes them; tools and tests may too).
        public init(
            service: any Service, environmentName: ServiceEnvironment.Name, environment: ServiceEnvironment, authenticator: Authenticator? = nil,
            clockSkew: ClockSkew = ClockSkew()
        ) {
            self.init(
                service: service, environmentName: environmentName, environment: environment, authenticator: authenticator, clockSkew: clockSkew,
                errorHandlers: nil, circuitBreaker: nil)
        }

        /// Creates a snapshot with the registry's error handlers and the environment's circuit.
        package init(
            service: any Service, environmentName: ServiceEnvironment.Name, environment: ServiceEnvironment, authenticator: Authenticator?,
            clockSkew: ClockSkew, errorHandlers: ErrorHandlers?, circuitBreaker: CircuitBreaker?
        ) {
            members = Members(
                service: service, environmentName: environmentName, environment: environment, authenticator: authenticator, clockSkew: clockSkew,
                errorHandlers: errorHandlers, circuitBreaker: circuitBreaker)
        }
    }
}
