/// Why a service could not be resolved, configured, or turned into a request.
public enum ServiceError: Error, Sendable, CustomStringConvertible {
    /// No service is registered under `name`.
    case unknownService(ServiceName, known: [ServiceName])
    /// No API is defined under `name` (see ``APIDefine``).
    case unknownAPI(String, known: [String])
    /// The service has no environment called `environment`.
    case unknownEnvironment(ServiceEnvironment.Name, service: ServiceName, known: [ServiceEnvironment.Name])
    /// The path and base URL do not make a valid URL.
    case invalidURL(service: ServiceName, path: String, reason: String)
    /// A `{placeholder}` in the path has no parameter to fill it.
    case missingPathParameter(String, service: ServiceName, path: String)
    /// The parameters cannot be encoded as the body asks (JSON needs finite numbers).
    case unencodableParameters(service: ServiceName, path: String, reason: String)
    /// A body value cannot be encoded: its type, and why.
    case unencodableBody(service: ServiceName, path: String, type: String, reason: String)
    /// Signing failed.
    case signingFailed(service: ServiceName, SigningError)
    /// The service is registered, but what it declares cannot work (an application error rule
    /// that would refuse every answer): `reason` says what and where.
    case invalidConfiguration(service: ServiceName, reason: String)
    /// A file the body is to be read from (a body file, a form's file part) cannot be read.
    case unreadableBodyFile(service: ServiceName, path: String, reason: String)

    /// What was wrong and where, in plain words.
    public var description: String {
        switch self {
        case .unknownService(let name, let known):
            "no service is registered as \"\(name)\"; known services: \(known.isEmpty ? "none" : known.map(\.rawValue).joined(separator: ", "))"
        case .unknownAPI(let name, let known):
            "no API is defined as \"\(name)\"; defined: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
        case .unknownEnvironment(let environment, let service, let known):
            "service \"\(service)\" has no environment \"\(environment)\"; it has: \(known.map(\.rawValue).joined(separator: ", "))"
        case .invalidURL(let service, let path, let reason):
            "service \"\(service)\", path \"\(path)\": \(reason)"
        case .missingPathParameter(let placeholder, let service, let path):
            "service \"\(service)\", path \"\(path)\": no parameter fills the path placeholder {\(placeholder)}"
        case .unencodableParameters(let service, let path, let reason):
            "service \"\(service)\", path \"\(path)\": the parameters cannot be encoded: \(reason)"
        case .unencodableBody(let service, let path, let type, let reason):
            "service \"\(service)\", path \"\(path)\": the body (\(type)) cannot be encoded: \(reason)"
        case .signingFailed(let service, let error):
            "service \"\(service)\": \(error)"
        case .invalidConfiguration(let service, let reason):
            "service \"\(service)\" cannot be used: \(reason)"
        case .unreadableBodyFile(let service, let path, let reason):
            "service \"\(service)\", path \"\(path)\": the body cannot be sent: \(reason)"
        }
    }
}
