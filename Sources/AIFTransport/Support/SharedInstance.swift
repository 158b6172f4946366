/// A process-wide instance that is made on first use, and can be set up until then.
///
/// ``CurlTransport/shared`` and ``APIProxy/shared`` are built on it: a program sets them up
/// once at start-up, before any load, and the library's defaults apply when it does not.
package final class SharedInstance<Value: Sendable>: Sendable {
    private enum State {
        case waiting(make: @Sendable () -> Value)
        case made(Value)
    }

    private let state: Locked<State>
    private let name: String

    /// - Parameters:
    ///   - name: How users reach it (`CurlTransport.shared`), for errors.
    ///   - make: Makes the default instance.
    package init(_ name: String, make: @escaping @Sendable () -> Value) {
        self.name = name
        state = Locked(.waiting(make: make))
    }

    /// The instance, made now if this is its first use.
    package var value: Value {
        state.withLock { state in
            switch state {
            case .made(let value):
                return value
            case .waiting(let make):
                let value = make()
                state = .made(value)
                return value
            }
        }
    }

    /// Replaces how the instance will be made.
    ///
    /// - Throws: ``CurlTransport/SharedInstanceError`` when the instance is in use already.
    package func configure(_ make: @escaping @Sendable () -> Value) throws(CurlTransport.SharedInstanceError) {
        let configured = state.withLock { state -> Bool in
            guard case .waiting = state else { return false }
            state = .waiting(make: make)
            return true
        }
        if !configured { throw CurlTransport.SharedInstanceError(name: name) }
    }
}

extension CurlTransport {
    /// A shared instance was set up after it had been used.
    public struct SharedInstanceError: Error, Sendable, CustomStringConvertible {
        /// The shared instance, as users reach it (`APIProxy.shared`).
        public let name: String

        /// What went wrong and what to do instead.
        public var description: String {
            "\(name) is already in use, so it can no longer be configured: configure it once at start-up, before the first request"
        }
    }
}
