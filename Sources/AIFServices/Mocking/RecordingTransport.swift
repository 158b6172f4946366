import Foundation
package import Logging

/// A transport that writes each response of a real environment's loads as a fixture (see
/// ``FixtureTransport/Recorder``) and hands it on: what a recording proxy sends a load's exchanges
/// through. A redirect is written as it came — its status and `Location` — and so is the
/// answer at its target when that lies under the environment's URL, so that replaying follows
/// the same hops.
package struct RecordingTransport: BatchingTransport {
    let base: any HTTPTransport
    let recorder: FixtureTransport.Recorder
    /// The service and environment of the load whose exchanges go through it.
    let resolved: ServiceRegistry.ResolvedService
    let logger: Logger

    package init(base: any HTTPTransport, recorder: FixtureTransport.Recorder, resolved: ServiceRegistry.ResolvedService, logger: Logger) {
        self.base = base
        self.recorder = recorder
        self.resolved = resolved
        self.logger = logger
    }

    package func send(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        base.send(request, progress: progress) { [self] result in
            record(request, result)
            completion(result)
        }
    }

    package func send(_ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws(TransportError) -> HTTPResponse {
        let response = try await base.send(request, progress: progress)
        record(request, .success(response))
        return response
    }

    package func exchange(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?, completingOn executor: any StepExecutor,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        base.exchange(request, progress: progress, through: executor) { [self] result in
            record(request, result)
            completion(result)
        }
    }

    package var ownThreadExecutor: (any StepExecutor)? { base.threadForLoads }
    package var redirects: HTTPRequest.RedirectPolicy { base.redirects }

    private func record(_ request: HTTPRequest, _ result: Result<HTTPResponse, TransportError>) {
        guard case .success(let response) = result else { return }
        recorder.record(request, response, for: resolved, logger: logger)
    }
}
