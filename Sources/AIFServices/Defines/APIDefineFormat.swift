import Foundation

/// A file format API defines can be written in besides JSON: it reads a file into the JSON
/// values the defines are read from, with where each key path stands in the file, so that an
/// error names the line and column. `AIFNetworkingYAML` (trait `YAML`) has one for YAML; pass it
/// to ``ServiceRegistry/registerAPIs(inDirectory:environment:formats:)``.
public protocol APIDefineFormat: Sendable {
    /// The endings of the file names it reads (`.apis.yaml`, `.apis.yml`).
    var fileSuffixes: [String] { get }

    /// Reads a file.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - file: Its path, for errors.
    /// - Returns: The file as JSON values, and its places.
    /// - Throws: ``ConfigurationError`` for a file that is not in the format, located when the
    ///   format tells where.
    func read(_ data: Data, file: String) throws(ConfigurationError) -> APIDefineDocument
}

/// A define file read into JSON values, with the line and column each key path starts at.
public struct APIDefineDocument: Sendable {
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
    public var places: [String: Place]

    /// Creates a document.
    public init(root: JSONValue, places: [String: Place] = [:]) {
        self.root = root
        self.places = places
    }
}

/// The JSON format, which every registry reads (`*.apis.json`). Errors name key paths; invalid
/// JSON is located by line and column.
struct JSONDefineFormat: APIDefineFormat {
    var fileSuffixes: [String] { [".apis.json"] }

    func read(_ data: Data, file: String) throws(ConfigurationError) -> APIDefineDocument {
        do {
            return APIDefineDocument(root: JSONValue(tape: try JSONTape(parsing: [UInt8](data)), at: 0))
        } catch {
            throw ConfigurationError(file: file, key: nil, problem: "is not valid JSON: \(error.message) (at \(ConfigurationError.location(of: error.offset, in: data)))")
        }
    }
}

extension [any APIDefineFormat] {
    /// The format of `file`, by its name's ending: JSON, or one of these.
    func format(of file: URL) -> (any APIDefineFormat)? {
        let name = file.lastPathComponent
        return ([JSONDefineFormat()] + self).first { format in format.fileSuffixes.contains { name.hasSuffix($0) } }
    }

    /// Whether `file` is named as a define file of some format: `*.apis.json`, `*.apis.yaml`,
    /// `*.apis.yml`, or a suffix of one of these formats.
    func isDefineFile(_ file: URL) -> Bool {
        let name = file.lastPathComponent
        return format(of: file) != nil || [".apis.yaml", ".apis.yml"].contains { name.hasSuffix($0) }
    }
}
