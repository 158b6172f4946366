package import Foundation

/// A GraphQL operation an endpoint runs (`Endpoint.graphQLQuery`, `Endpoint.graphQLMutation`):
/// what it sends, whether it may be sent again, and how its answer's `errors` fail it. A class:
/// an endpoint without one reads a single empty reference for it on every load.
package final class GraphQLOperation: Sendable {
    /// What an operation does.
    package enum Kind: Sendable, Hashable {
        /// Reads: safe to send again, as a GET is.
        case query
        /// Changes: never sent a second time once the server may have run it, unless the
        /// server honours idempotency keys.
        case mutation
    }

    /// Query or mutation.
    package let kind: Kind
    /// The GraphQL document, sent as `query`.
    package let document: String
    /// Which operation of the document runs (`operationName`), for a document with several.
    package let name: String?
    /// Whether the server runs a mutation once per idempotency key.
    package let serverHonoursIdempotencyKeys: Bool

    package init(kind: Kind, document: String, name: String?, serverHonoursIdempotencyKeys: Bool = false) {
        self.kind = kind
        self.document = document
        self.name = name
        self.serverHonoursIdempotencyKeys = kind == .mutation && serverHonoursIdempotencyKeys
    }

    /// Whether a request of the operation may be sent again once the server may have run
    /// it: `true` for a query, `false` for a mutation whose server ignores idempotency keys,
    /// `nil` (as its method says, and its key) for one whose server honours them.
    package var repeatable: Bool? {
        switch kind {
        case .query: true
        case .mutation: serverHonoursIdempotencyKeys ? nil : false
        }
    }

    /// The body of a POST: `{"query": …, "operationName": …, "variables": {…}}`, the variables
    /// written as given (no key conversion of the service's encoder applies to them); `nil`
    /// when a variable holds a number JSON cannot write.
    package func body(variables: Parameters) -> Data? {
        JSONValue.object(members(variables: variables)).jsonBody()
    }

    /// The query of a GET: `query`, `operationName` and `variables`, this one as one JSON text;
    /// `nil` when a variable holds a number JSON cannot write.
    package func queryParameters(variables: Parameters) -> Parameters? {
        var parameters = Parameters()
        parameters["query"] = .string(document)
        if let name { parameters["operationName"] = .string(name) }
        if !variables.isEmpty {
            guard let json = JSONValue.object(variables.dictionary).jsonBody() else { return nil }
            parameters["variables"] = .string(String(decoding: json, as: UTF8.self))
        }
        return parameters
    }

    /// The operation and its variables as one value: what identifies a load of it (its cache
    /// key's parameters).
    package func identity(variables: Parameters) -> Parameters {
        Parameters(members(variables: variables))
    }

    private func members(variables: Parameters) -> [String: JSONValue] {
        var members: [String: JSONValue] = ["query": .string(document), "variables": .object(variables.dictionary)]
        if let name { members["operationName"] = .string(name) }
        return members
    }

    /// The veto for a body whose `errors` is not empty: its code is the first error's
    /// `extensions.code` (`GRAPHQL_ERROR` without one), its message the first error's, with its
    /// path, and how many more there are. `nil` for a body that reports no error.
    package static func veto(in tape: JSONTape) -> ServiceVeto? {
        guard tape.tokens[0].kind == .object, let errors = tape.member("errors", of: 0), tape.tokens[errors].kind == .array,
            tape.tokens[errors].count > 0
        else { return nil }
        let first = errors + 1
        var code = "GRAPHQL_ERROR"
        var message = "the server reported an error"
        if tape.tokens[first].kind == .object {
            if let text = tape.member("message", of: first).flatMap({ tape.text(at: $0) }) { message = text }
            if let extensions = tape.member("extensions", of: first), tape.tokens[extensions].kind == .object,
                let field = tape.member("code", of: extensions), let text = tape.text(at: field)
            {
                code = text
            }
            if let path = tape.member("path", of: first), tape.tokens[path].kind == .array, tape.tokens[path].count > 0 {
                var steps: [String] = []
                var element = path + 1
                for _ in 0..<Int(tape.tokens[path].count) {
                    if let text = tape.text(at: element) { steps.append(text) }
                    element = Int(tape.tokens[element].next)
                }
                message += " (at \(steps.joined(separator: ".")))"
            }
        }
        let more = Int(tape.tokens[errors].count) - 1
        if more > 0 { message += more == 1 ? "; and 1 more error" : "; and \(more) more errors" }
        return ServiceVeto(code: code, message: message)
    }
}
