// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser

/// What kind of failure ended a command, and the exit status that says so — one per class,
/// as curl's and httpie's statuses do, so that a script can tell them apart.
enum FailureClass: Int32, CaseIterable {
    /// Anything else (a cancelled load).
    case other = 1
    /// The config file, the service or environment, or the parameters.
    case configuration = 2
    /// No connection could be made, or it broke.
    case connection = 3
    /// The request timed out.
    case timeout = 4
    /// The TLS handshake or the certificate check failed.
    case tls = 5
    /// The server answered 4xx.
    case clientError = 6
    /// The server answered 5xx.
    case serverError = 7
    /// The response was refused: an application error code in its body, a refused
    /// credential, a body that does not decode.
    case refused = 8
    /// Stopped before the end: `--max-pages` pages loaded and the last said more follow.
    case incomplete = 9

    /// The class of a load's error.
    init(_ error: APIError) {
        switch error.kind {
        case .configuration, .invalidParameters:
            self = .configuration
        case .noNetwork, .responseLost:
            self = .connection
        case .timeout:
            self = .timeout
        case .transport:
            self = (error.underlyingError as? TransportError)?.code == .tlsFailure ? .tls : .connection
        case .httpStatus:
            self = (error.statusCode ?? 0) >= 500 ? .serverError : .clientError
        case .serviceVeto, .authenticationFailed, .decodingFailed, .invalidResponse, .noContent:
            self = .refused
        default:
            self = .other
        }
    }

    /// The status to exit with.
    var exitCode: ExitCode { ExitCode(rawValue) }

    /// The table printed in the commands' help.
    static let helpText = """
        Exit status: 0 on a 2xx answer; 1 other failures; 2 configuration (config file, service, \
        environment, parameters); 3 connection; 4 timeout; 5 TLS; 6 HTTP 4xx; 7 HTTP 5xx; \
        8 refused (an application error code, a refused credential, an undecodable body); \
        9 stopped at --max-pages with more pages to load; 64 a command line it cannot use.
        """
}
#endif
