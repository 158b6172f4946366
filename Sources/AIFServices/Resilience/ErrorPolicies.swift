import Foundation
@_spi(CrossModule) import AIFTransport

extension ErrorPolicies {
    /// What a load does when its response carries a given application error code (a service veto's
    /// ``ServiceVeto/code``) or HTTP status.
    public enum Action: Sendable, Hashable, CustomStringConvertible {
        /// Fail the load with the error, as without a policy.
        case surface
        /// Send the load again, as its ``RetryPolicy`` allows (attempts, methods, wait, budget),
        /// whatever the statuses the policy lists.
        case retry
        /// Refresh the credential through the service's ``Authenticator`` and send the load once
        /// more, as a 401 would.
        case refreshCredentials
        /// The signing time was refused: sign again with the server's time, as the answer's `Date`
        /// header taught the environment's ``ServiceRegistry/ClockSkew``, and send once more, at once — what a 401
        /// does for a signed request, for servers that say it with a code of their own.
        case correctClock
        /// Fail the load, and tell the app's handler of this name (registered with
        /// ``ServiceRegistry/setErrorHandler(_:_:)``) — once per distinct event, not once per load.
        case handler(String)

        /// `surface`, `retry`, `refreshCredentials`, `correctClock` or `handler:NAME`, as in config files.
        public var description: String {
            switch self {
            case .surface: "surface"
            case .retry: "retry"
            case .refreshCredentials: "refreshCredentials"
            case .correctClock: "correctClock"
            case .handler(let name): "handler:\(name)"
            }
        }

        /// Reads the config form (``description``); `nil` for anything else.
        public init?(configValue text: String) {
            switch text {
            case "surface": self = .surface
            case "retry": self = .retry
            case "refreshCredentials": self = .refreshCredentials
            case "correctClock": self = .correctClock
            default:
                guard text.hasPrefix("handler:"), text.count > "handler:".count else { return nil }
                self = .handler(String(text.dropFirst("handler:".count)))
            }
        }
    }
}

/// A service's policies for application error codes and HTTP statuses (``Service/errorPolicies``,
/// or the `errorPolicies` key of its config file). A code wins over the status it came with.
///
/// The code is the service's veto's (``Service/applicationErrors`` or ``Service/veto(_:)``), or
/// for a failed status the one its error body carries where the service's ``Service/errorBody``
/// rule reads it (`{"error": {"code": "idempotency_key_in_use"}}` with the code at `error.code`):
/// `"codes": {"idempotency_key_in_use": "retry"}` retries Stripe's 409 for a key still in use.
public struct ErrorPolicies: Sendable, Hashable {
    /// Policies by application error code (as text: `4011`).
    public var codes: [String: Action]
    /// Policies by HTTP status.
    public var statuses: [Int: Action]

    /// Creates the policies.
    public init(codes: [String: Action] = [:], statuses: [Int: Action] = [:]) {
        self.codes = codes
        self.statuses = statuses
    }

    /// The policy for a response and the application error code found in it, if one applies.
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - code: The service's veto's code, or the code of a failed status's error body.
    /// - Returns: The policy for the code, else for the status; `nil` for none.
    public func policy(for response: HTTPResponse, code: String?) -> Action? {
        if let code, let policy = codes[code] { return policy }
        return statuses[response.statusCode]
    }
}

extension ErrorPolicies {
    /// What an error handler hears: which service environment answered what.
    public struct Event: Sendable, Hashable, CustomStringConvertible {
        /// The handler's name, as the policy gives it.
        public var handler: String
        /// The service.
        public var service: ServiceName
        /// Its environment.
        public var environment: ServiceEnvironment.Name
        /// The HTTP status.
        public var statusCode: Int
        /// The application error code, when the policy matched one.
        public var code: String?
        /// The application error message, if the response had one.
        public var message: String?

        package init(handler: String, service: ServiceName, environment: ServiceEnvironment.Name, statusCode: Int, code: String?, message: String?) {
            self.handler = handler
            self.service = service
            self.environment = environment
            self.statusCode = statusCode
            self.code = code
            self.message = message
        }

        /// `upgradeRequired: shop/online answered 426`.
        public var description: String {
            "\(handler): \(service)/\(environment) answered \(statusCode)" + (code.map { " with code \($0)" } ?? "") + (message.map { ": \($0)" } ?? "")
        }
    }
}

/// The app's error handlers by name, each told of an event once: a burst of loads meeting the
/// same code calls it once; the same event again after `quietPeriod` without it calls it again.
package final class ErrorHandlers: Sendable {
    private struct State {
        var handlers: [String: @Sendable (ErrorPolicies.Event) -> Void] = [:]
        var lastSeen: [EventKey: Duration] = [:]
        var quietPeriod: Duration
    }

    private struct EventKey: Hashable {
        var handler: String
        var service: ServiceName
        var environment: ServiceEnvironment.Name
        var statusCode: Int
        var code: String?
    }

    private let state: Locked<State>

    init(quietPeriod: Duration = .seconds(5)) {
        state = Locked(State(quietPeriod: quietPeriod))
    }

    /// How long the same event must stay away to be told again; 5 seconds by default.
    var quietPeriod: Duration {
        get { state.withLock { $0.quietPeriod } }
        set { state.withLock { $0.quietPeriod = newValue } }
    }

    func set(_ name: String, _ handler: (@Sendable (ErrorPolicies.Event) -> Void)?) {
        state.withLock { $0.handlers[name] = handler }
    }

    /// Tells the event's handler, unless it heard of the same event within the quiet period
    /// (which each repeat extends) — `now` on the load clock that met it. Returns whether a
    /// handler of that name exists.
    @discardableResult
    package func tell(_ event: ErrorPolicies.Event, now: Duration) -> Bool {
        let key = EventKey(handler: event.handler, service: event.service, environment: event.environment, statusCode: event.statusCode, code: event.code)
        let (handler, fresh) = state.withLock { state -> ((@Sendable (ErrorPolicies.Event) -> Void)?, Bool) in
            let last = state.lastSeen[key]
            state.lastSeen[key] = now
            return (state.handlers[event.handler], last.map { now - $0 > state.quietPeriod } ?? true)
        }
        if fresh { handler?(event) }
        return handler != nil
    }
}
