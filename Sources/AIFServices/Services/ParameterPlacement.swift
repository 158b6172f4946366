import Foundation

extension Parameters {
    /// Where one parameter goes in a request — the path, the query, a header or the body — the name
    /// it goes under there, and how an array is written.
    ///
    /// A parameter no placement names goes where its method puts parameters: the query of a GET,
    /// HEAD, DELETE or OPTIONS, the body of a POST, PUT or PATCH (the query when the call sends a
    /// body of its own). Placements say otherwise, one parameter at a time, as an OpenAPI document's
    /// `in`, `style` and `explode` do:
    ///
    /// ```swift
    /// let updatePet = Endpoint<Pet>(
    ///     service: "petstore", path: "pet/{petId}", method: .post,
    ///     parameterPlacements: ["name": .query, "status": .query, "api_key": .header()])
    /// ```
    ///
    /// A request whose body has no parameter left, once placed ones went elsewhere, sends no body
    /// (no `{}`, no `Content-Type`). In a header, a list is written as its elements joined by
    /// commas; a dictionary cannot be placed there.
    public struct Placement: Sendable, Hashable {
        /// A part of a request.
        public enum Location: String, Sendable, Hashable, CaseIterable {
            /// A `{name}` placeholder of the path, which must have one; a list is written as its
            /// elements joined by commas (`/pets/1,2,3`).
            case path
            /// The query string.
            case query
            /// A header field.
            case header
            /// The body, encoded as the request's body encoding says, whatever the method.
            case body
        }

        /// The part of the request it goes in.
        public var location: Location
        /// The name it goes under — a header's field name, a query item's or a body member's key —
        /// when not the parameter's own.
        public var name: String?
        /// How it is written when it is an array, in the query or a form body; the request's array
        /// encoding when `nil`.
        public var arrays: Parameters.ArrayEncoding?

        /// A placement.
        ///
        /// - Parameters:
        ///   - location: The part of the request.
        ///   - name: The name there; the parameter's own when `nil`.
        ///   - arrays: How an array is written there; the request's array encoding when `nil`.
        public init(_ location: Location, name: String? = nil, arrays: Parameters.ArrayEncoding? = nil) {
            self.location = location
            self.name = name
            self.arrays = arrays
        }

        /// In the path's `{name}` placeholder.
        public static let path = Parameters.Placement(.path)
        /// In the query, arrays written as the request says.
        public static let query = Parameters.Placement(.query)
        /// In the body.
        public static let body = Parameters.Placement(.body)

        /// In the query, an array written as `arrays` says (OpenAPI's `form` style with `explode` is
        /// ``Parameters/ArrayEncoding/repeatedKeys``, without it ``Parameters/ArrayEncoding/commaSeparated``).
        public static func query(arrays: Parameters.ArrayEncoding) -> Parameters.Placement {
            Parameters.Placement(.query, arrays: arrays)
        }

        /// In a header field called `name`, or named as the parameter is when `nil`.
        public static func header(_ name: String? = nil) -> Parameters.Placement {
            Parameters.Placement(.header, name: name)
        }
    }
}

extension Parameters.Placement: CustomStringConvertible {
    /// `query`, `header X-Request-ID`, `query (repeated)`: as a define file writes it, in short.
    public var description: String {
        var text = location.rawValue
        if let name { text += " " + name }
        if let arrays, let word = arrays.configName { text += " (\(word))" }
        return text
    }
}

extension Parameters.Placement {
    /// A placement as a define file writes it: a location's name (`"query"`), or an object with
    /// `in`, `name` and `arrays`.
    ///
    /// - Returns: The placement, or what is wrong and under which member (`nil` for the value
    ///   itself).
    package static func read(_ value: JSONValue) -> Result<Parameters.Placement, ReadingProblem> {
        let locations = Location.allCases.map(\.rawValue).joined(separator: ", ")
        switch value {
        case .string(let word):
            guard let location = Location(rawValue: word) else {
                return .failure(ReadingProblem(member: nil, problem: "\"\(word)\" is not one of \(locations) (or an object: in, name, arrays)"))
            }
            return .success(Parameters.Placement(location))
        case .object(let members):
            let keys = ["arrays", "in", "name"]
            if let unknown = members.keys.sorted().first(where: { !keys.contains($0) }) {
                return .failure(ReadingProblem(member: unknown, problem: "is not a known key; expected one of: \(keys.joined(separator: ", "))"))
            }
            guard case .string(let word)? = members["in"], let location = Location(rawValue: word) else {
                return .failure(ReadingProblem(member: "in", problem: "must be one of \(locations)"))
            }
            var placement = Parameters.Placement(location)
            if let name = members["name"] {
                guard case .string(let text) = name, Self.isToken(text) else {
                    return .failure(ReadingProblem(member: "name", problem: "must be a name of letters, digits and !#$%&'*+-.^_`|~ (a header's field name, a query item's key)"))
                }
                placement.name = text
            }
            if let arrays = members["arrays"] {
                guard case .string(let word) = arrays, let encoding = Parameters.ArrayEncoding(configName: word) else {
                    return .failure(ReadingProblem(member: "arrays", problem: "must be one of \(Parameters.ArrayEncoding.configNames.joined(separator: ", "))"))
                }
                guard location == .query || location == .body else {
                    return .failure(ReadingProblem(member: "arrays", problem: "says how a query or a form writes an array; in the \(location.rawValue), a list is written joined by commas"))
                }
                placement.arrays = encoding
            }
            return .success(placement)
        default:
            return .failure(ReadingProblem(member: nil, problem: "must be one of \(locations), or an object (in, name, arrays)"))
        }
    }

    /// Why a placement could not be read, and under which of its members.
    package struct ReadingProblem: Error {
        /// The member at fault (`in`, `arrays`), or `nil` for the placement itself.
        package var member: String?
        /// What is wrong.
        package var problem: String
    }

    /// Whether `text` is an HTTP token (RFC 9110): what a header's field name may be.
    package static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}

extension Parameters.ArrayEncoding {
    /// The encodings a config file names, by their names there.
    package static let configNames = ["brackets", "indexed", "repeated", "comma", "pipes", "spaces"]

    /// The encoding a config file names `name`: `brackets`, `indexed`, `repeated`, `comma`,
    /// `pipes` or `spaces`.
    package init?(configName name: String) {
        switch name {
        case "brackets": self = .brackets
        case "indexed": self = .indexed
        case "repeated": self = .repeatedKeys
        case "comma": self = .commaSeparated
        case "pipes": self = .pipeSeparated
        case "spaces": self = .spaceSeparated
        default: return nil
        }
    }

    /// Its name in a config file; `nil` for one written by a function.
    package var configName: String? {
        switch self {
        case .brackets: "brackets"
        case .indexed: "indexed"
        case .repeatedKeys: "repeated"
        case .commaSeparated: "comma"
        case .pipeSeparated: "pipes"
        case .spaceSeparated: "spaces"
        case .written: nil
        }
    }
}
