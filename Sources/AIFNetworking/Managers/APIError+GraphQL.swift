import Foundation

extension APIError {
    /// One error of a GraphQL response's `errors`, as the GraphQL specification writes it
    /// (``graphQLErrors(extensions:)``).
    ///
    /// `Extensions` is the type `extensions` decodes into: the server's own fields (GitHub's
    /// `type`, Shopify's `code` and `cost` …); ``/AIFServices/JSONValue`` reads any.
    public struct GraphQLError<Extensions: Decodable & Sendable>: Decodable, Sendable, CustomStringConvertible {
        /// What went wrong, in the server's words.
        public var message: String
        /// The field of the result where it went wrong, outermost first (`viewer`,
        /// `repositories`, `2`); empty when the error is not a field's (a syntax error).
        public var path: [PathElement]
        /// Where in the document, when the server says.
        public var locations: [Location]
        /// The server's own fields; `nil` when it sent none.
        public var extensions: Extensions?

        /// One step of a path: a field's name or a list's index.
        public enum PathElement: Decodable, Sendable, Hashable, CustomStringConvertible {
            /// A field.
            case field(String)
            /// An element of a list.
            case index(Int)

            /// Decodes a name or an index.
            public init(from decoder: any Decoder) throws {
                let value = try decoder.singleValueContainer()
                if let index = try? value.decode(Int.self) {
                    self = .index(index)
                } else {
                    self = .field(try value.decode(String.self))
                }
            }

            /// The name, or the index.
            public var description: String {
                switch self {
                case .field(let name): name
                case .index(let index): String(index)
                }
            }
        }

        /// A line and a column of the document, each from 1.
        public struct Location: Decodable, Sendable, Hashable {
            /// The line.
            public var line: Int
            /// The column.
            public var column: Int

            /// A location.
            public init(line: Int, column: Int) {
                self.line = line
                self.column = column
            }
        }

        private enum CodingKeys: String, CodingKey {
            case message, path, locations, extensions
        }

        /// Decodes an error; a missing path or list of locations is empty.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            message = try container.decode(String.self, forKey: .message)
            path = try container.decodeIfPresent([PathElement].self, forKey: .path) ?? []
            locations = try container.decodeIfPresent([Location].self, forKey: .locations) ?? []
            extensions = try container.decodeIfPresent(Extensions.self, forKey: .extensions)
        }

        /// The message, and the path when there is one (`Could not resolve to a User (at
        /// repositoryOwner)`).
        public var description: String {
            path.isEmpty ? message : "\(message) (at \(path.map(\.description).joined(separator: ".")))"
        }
    }

    /// The `errors` of the GraphQL response that failed the load, each with its `extensions`
    /// decoded as `Extensions`; empty when the response has none (or none that decode).
    ///
    /// ```swift
    /// catch let error as APIError {
    ///     for problem in error.graphQLErrors(extensions: GitHubExtensions.self) {
    ///         print(problem.message, problem.path, problem.extensions?.type ?? "-")
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter extensions: What each error's `extensions` decodes into; ``/AIFServices/JSONValue``
    ///   (any JSON) by default.
    /// - Returns: The errors, in the order the server listed them.
    public func graphQLErrors<Extensions: Decodable & Sendable>(extensions: Extensions.Type = JSONValue.self) -> [GraphQLError<Extensions>] {
        guard let body = response?.body, !body.isEmpty else { return [] }
        return (try? FastJSONDecoder().decode(GraphQLBody<JSONValue, Extensions>.self, from: body))?.errors ?? []
    }

    /// The `data` the GraphQL server sent beside its `errors` — a partial result, the fields
    /// that failed `null` — decoded as `Data`; `nil` when there is none, or it does not decode
    /// (a field the type requires is among those that failed).
    ///
    /// - Parameter type: The type to decode `data` into: the endpoint's content, or one whose
    ///   fields are optional where they may fail.
    /// - Returns: The partial data, or `nil`.
    public func graphQLData<Data: Decodable>(as type: Data.Type) -> Data? {
        guard let body = response?.body, !body.isEmpty else { return nil }
        return (try? FastJSONDecoder().decode(GraphQLBody<Data, JSONValue>.self, from: body))?.data ?? nil
    }
}

/// A GraphQL response body: its `data` and its `errors`.
private struct GraphQLBody<Data: Decodable, Extensions: Decodable & Sendable>: Decodable {
    var data: Data?
    var errors: [APIError.GraphQLError<Extensions>]?
}
