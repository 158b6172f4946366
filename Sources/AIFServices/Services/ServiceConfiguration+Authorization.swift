import Foundation

extension ServiceRegistry.ConfiguredService {
    /// An environment's `authorization`: the fixed credential its requests carry, read from
    /// environment variables. A variable written any other way is refused (a config file never
    /// holds a secret in clear); one that is not set gives an authenticator that fails each load
    /// saying so, so that an environment without its key leaves the others usable.
    static func authenticator(_ section: ServiceFile.Authorization?, at path: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> Authenticator? {
        guard let section else { return nil }
        let given = [section.bearer != nil, section.basic != nil, section.parameter != nil].filter { $0 }.count
        guard given == 1 else {
            throw ServiceRegistry.ConfigurationError(file: reader.file, key: path, problem: given == 0 ? "names no credential: give bearer, basic or parameter" : "gives more than one of bearer, basic and parameter")
        }
        if let bearer = section.bearer {
            return try secret(bearer, at: "\(path).bearer", reader: reader).authenticator { .bearer($0) }
        }
        if let basic = section.basic?.section {
            let user: Variable = basic.user.hasPrefix("${")
                ? try secret(basic.user, at: "\(path).basic.user", reader: reader) : .value(try reader.substitute(basic.user, at: "\(path).basic.user"))
            let password = try basic.password.map { text throws(ServiceRegistry.ConfigurationError) in try secret(text, at: "\(path).basic.password", reader: reader) } ?? .value("")
            switch (user, password) {
            case (.value(let user), .value(let password)): return .basic(user: user, password: password)
            case (.unset(let problem), _), (_, .unset(let problem)): return Variable.unset(problem).authenticator { _ in .basic(user: "", password: "") }
            }
        }
        if let parameter = section.parameter?.section {
            let name = try reader.substitute(parameter.name, at: "\(path).parameter.name")
            guard !name.isEmpty else { throw ServiceRegistry.ConfigurationError(file: reader.file, key: "\(path).parameter.name", problem: "is empty") }
            return try secret(parameter.value, at: "\(path).parameter.value", reader: reader).authenticator { .fixed($0, placement: .parameter(name)) }
        }
        return nil
    }

    /// A secret's value, read from the environment variable it must name.
    private enum Variable {
        case value(String)
        /// The variable is not set: this says which, and where.
        case unset(String)

        /// The authenticator `make` gives the value, or one whose every load fails saying
        /// which variable is not set.
        func authenticator(_ make: (String) -> Authenticator) -> Authenticator {
            switch self {
            case .value(let value): return make(value)
            case .unset(let problem):
                return Authenticator(expiredStatusCodes: []) { throw FixedCredentialMissing(reason: problem) }
            }
        }
    }

    private static func secret(_ written: String, at key: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> Variable {
        guard written.hasPrefix("${"), written.hasSuffix("}"), written.count > 3, !written.dropFirst(2).dropLast().contains("}") else {
            throw ServiceRegistry.ConfigurationError(
                file: reader.file, key: key, problem: "must name an environment variable (write \"${NAME}\"): a config file never holds a secret in clear")
        }
        let name = String(written.dropFirst(2).dropLast())
        guard let value = reader.environment[name] else {
            return .unset("\(reader.file): \(key) refers to the environment variable \(name), which is not set")
        }
        guard !value.isEmpty else { return .unset("\(reader.file): \(key) refers to the environment variable \(name), which is empty") }
        return .value(value)
    }
}
