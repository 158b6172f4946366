/// Why a service could not be resolved, configured, or turned into a request.
public enum ServiceError: Error, Sendable, CustomStringConvertible {
    /// No service is registered under `name`.
    case unknownService(ServiceName, known: [ServiceName])
    /// The service has no environment called `environment`.
    case unknownEnvironment(EnvironmentName, service: ServiceName, known: [EnvironmentName])
    /// The method name and base URL do not make a valid URL.
    case invalidURL(service: ServiceName, methodName: String, reason: String)
    /// A `{placeholder}` in the method name has no parameter to fill it.
    case missingPathParameter(String, service: ServiceName, methodName: String)
    /// The parameters cannot be encoded as the body asks (JSON needs finite numbers).
    case unencodableParameters(service: ServiceName, methodName: String, reason: String)
    /// Signing failed.
    case signingFailed(service: ServiceName, SigningError)
    /// A file the body is to be read from (a body file, a form's file part) cannot be read.
    case unreadableBodyFile(service: ServiceName, methodName: String, reason: String)

    /// What was wrong and where, in plain words.
    public var description: String {
        switch self {
        case .unknownService(let name, let known):
            "no service is registered as \"\(name)\"; known services: \(known.isEmpty ? "none" : known.map(\.rawValue).joined(separator: ", "))"
        case .unknownEnvironment(let environment, let service, let known):
            "service \"\(service)\" has no environment \"\(environment)\"; it has: \(known.map(\.rawValue).joined(separator: ", "))"
        case .invalidURL(let service, let methodName, let reason):
            "service \"\(service)\", method \"\(methodName)\": \(reason)"
        case .missingPathParameter(let placeholder, let service, let methodName):
            "service \"\(service)\", method \"\(methodName)\": no parameter fills the path placeholder {\(placeholder)}"
        case .unencodableParameters(let service, let methodName, let reason):
            "service \"\(service)\", method \"\(methodName)\": the parameters cannot be encoded: \(reason)"
        case .signingFailed(let service, let error):
            "service \"\(service)\": \(error)"
        case .unreadableBodyFile(let service, let methodName, let reason):
            "service \"\(service)\", method \"\(methodName)\": the body cannot be sent: \(reason)"
        }
    }
}
