public import Foundation

extension APIDefine {
    /// A file format API defines can be written in besides JSON: it reads a file into the JSON
    /// values the defines are read from, with where each key path stands in the file, so that an
    /// error names the line and column. `AIFNetworkingYAML` (trait `YAML`) has one for YAML; pass it
    /// to ``ServiceRegistry/registerAPIs(inDirectory:environment:formats:)``.
    public protocol Format: Sendable {
        /// The endings of the file names it reads (`.apis.yaml`, `.apis.yml`).
        var fileSuffixes: [String] { get }

        /// Reads a file.
        ///
        /// - Parameters:
        ///   - data: The file's bytes.
        ///   - file: Its path, for errors.
        /// - Returns: The file as JSON values, and its places.
        /// - Throws: ``ServiceRegistry/ConfigurationError`` for a file that is not in the format, located when the
        ///   format tells where.
        func read(_ data: Data, file: String) throws(ServiceRegistry.ConfigurationError) -> APIDefine.Document
    }
}

extension APIDefine {
    /// A define file read into JSON values, with the line and column each key path starts at.
    public struct Document: Sendable {
        /// Where a key stands in its file.
        public struct Place: Sendable, Hashable {
            /// The line, 1-based.
            public var line: Int
            /// The column, 1-based.
            public var column: Int

            /// Creates a place.
            public init(line: Int, column: Int) {
                self.line = line
                self.column = column
            }
        }

        /// The file's content.
        public var root: JSONValue
        /// Where each key path starts (members joined with dots: `@orders.place.method`); empty for a
        /// format that does not tell.
        public var places: [String: Place] {
            findPlaces?() ?? givenPlaces
        }
        private var givenPlaces: [String: Place]
        /// Works the places out when an error asks (the JSON format's: most files have no error).
        private var findPlaces: (@Sendable () -> [String: Place])?

        /// Creates a document.
        public init(root: JSONValue, places: [String: Place] = [:]) {
            self.root = root
            givenPlaces = places
        }

        /// Where `keyPath` stands, or — when the format told nothing of it — the nearest member
        /// above it that it located; `nil` when none is.
        /// The key path of `member` below `path` (`""` alone is the root's): members joined
        /// with dots, and a member without a name written `""`.
        package static func keyPath(_ path: String, _ member: String) -> String {
            let name = member.isEmpty ? "\"\"" : member
            return path.isEmpty ? name : "\(path).\(name)"
        }

        func place(of keyPath: String) -> Place? {
            let places = self.places
            var searched = keyPath[...]
            while !searched.isEmpty {
                if let place = places[String(searched)] { return place }
                searched = searched.lastIndex(of: ".").map { searched[..<$0] } ?? ""
            }
            return nil
        }

        /// Creates a document whose places are worked out only when an error asks for them.
        init(root: JSONValue, findingPlaces: @escaping @Sendable () -> [String: Place]) {
            self.root = root
            givenPlaces = [:]
            findPlaces = findingPlaces
        }
    }
}

extension APIDefine {
    /// The JSON format, which every registry reads (`*.apis.json`): errors name the line and column
    /// of the key they are about, as YAML's do; invalid JSON is located too.
    public struct JSONFormat: APIDefine.Format {
        /// Creates the format.
        public init() {}

        /// `.apis.json`.
        public var fileSuffixes: [String] { [".apis.json"] }

        /// Parses the file's JSON; the places of its keys are worked out when an error asks.
        public func read(_ data: Data, file: String) throws(ServiceRegistry.ConfigurationError) -> APIDefine.Document {
            let tape: JSONTape
            do {
                tape = try JSONTape(parsing: [UInt8](data))
            } catch {
                throw ServiceRegistry.ConfigurationError(file: file, key: nil, problem: "is not valid JSON: \(error.message) (at \(ServiceRegistry.ConfigurationError.location(of: error.offset, in: data)))")
            }
            return APIDefine.Document(root: JSONValue(tape: tape, at: 0)) {
                // Only for an error: recording every key's place doubled the time of reading a
                // thousand defines.
                let lines = LineStarts(tape.bytes)
                // The root's place, under the empty key path.
                var places: [String: APIDefine.Document.Place] = ["": lines.place(of: Int(tape.tokens[0].start) - (tape.tokens[0].kind == .string ? 1 : 0), in: tape.bytes)]
                Self.recordPlaces(in: tape, at: 0, path: "", lines: lines, into: &places)
                return places
            }
        }

        /// Writes down where each object member's key stands, by key path, below token `index`.
        private static func recordPlaces(in tape: JSONTape, at index: Int, path: String, lines: LineStarts, into places: inout [String: APIDefine.Document.Place]) {
            let token = tape.tokens[index]
            switch token.kind {
            case .object:
                var key = index + 1
                for _ in 0..<Int(token.count) {
                    let memberPath = APIDefine.Document.keyPath(path, tape.text(at: key) ?? "")
                    // The key's token starts inside its quotes.
                    places[memberPath] = lines.place(of: Int(tape.tokens[key].start) - 1, in: tape.bytes)
                    recordPlaces(in: tape, at: key + 1, path: memberPath, lines: lines, into: &places)
                    key = Int(tape.tokens[key + 1].next)
                }
            case .array:
                var element = index + 1
                for position in 0..<Int(token.count) {
                    recordPlaces(in: tape, at: element, path: "\(path)[\(position)]", lines: lines, into: &places)
                    element = Int(tape.tokens[element].next)
                }
            default:
                return
            }
        }
    }
}

/// Where each line of a text starts, to turn a byte offset into a line and a column.
struct LineStarts {
    private var starts = [0]

    init(_ bytes: [UInt8]) {
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") { starts.append(offset + 1) }
    }

    /// The 1-based line and column (in characters, not bytes) of `offset`.
    func place(of offset: Int, in bytes: [UInt8]) -> APIDefine.Document.Place {
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        // A character starts at every byte that is not a UTF-8 continuation byte.
        let column = bytes[starts[low]..<max(starts[low], offset)].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
        return APIDefine.Document.Place(line: low + 1, column: column)
    }
}

extension [any APIDefine.Format] {
    /// The format of `file`, by its name's ending: JSON, or one of these.
    func format(of file: URL) -> (any APIDefine.Format)? {
        let name = file.lastPathComponent
        return ([APIDefine.JSONFormat()] + self).first { format in format.fileSuffixes.contains { name.hasSuffix($0) } }
    }

    /// Whether `file` is named as a define file of some format: `*.apis.json`, `*.apis.yaml`,
    /// `*.apis.yml`, or a suffix of one of these formats.
    func isDefineFile(_ file: URL) -> Bool {
        let name = file.lastPathComponent
        return format(of: file) != nil || [".apis.yaml", ".apis.yml"].contains { name.hasSuffix($0) }
    }
}
