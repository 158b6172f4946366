// The product's one dependency, Yams, comes only with the package's `YAML` trait, so that
// packages using the core library alone never resolve it:
//     .package(url: "…/AIFNetworking.git", from: "…", traits: ["YAML"])
#if YAML
import AIFNetworking
import Foundation
import Yams

/// API defines written in YAML (`*.apis.yaml`, `*.apis.yml`): the same keys as the JSON files
/// (see ``/AIFServices/APIDefine``), and errors that name the line and column besides the key path.
///
/// ```swift
/// import AIFNetworkingYAML
///
/// try ServiceRegistry.shared.registerAPIs(inDirectory: URL(filePath: "Configs"), formats: [YAMLDefineFormat()])
/// ```
///
/// ```yaml
/// DEFAULT:
///   service: shop
/// goods.detail:
///   path: goods/{id}
///   cache: {lifetimeSeconds: 60}
/// "@orders":
///   DEFAULT: {pathPrefix: orders}
///   place: {path: "", method: POST}
/// ```
///
/// Scalars are typed as YAML 1.2's core schema types them (`true`, `20`, `0.5`, `null`; quoted, a
/// string — `yes` and `no` stay strings), and anchors and aliases read as the values they name. A key given twice in one mapping is an error.
public struct YAMLDefineFormat: APIDefine.Format {
    /// Creates the format.
    public init() {}

    /// `.apis.yaml` and `.apis.yml`.
    public var fileSuffixes: [String] { [".apis.yaml", ".apis.yml"] }

    /// Reads a YAML file into JSON values and the place of each key path.
    public func read(_ data: Data, file: String) throws(ServiceRegistry.ConfigurationError) -> APIDefine.Document {
        guard let text = String(data: data, encoding: .utf8) else {
            throw ServiceRegistry.ConfigurationError(file: file, key: nil, problem: "is not UTF-8 text")
        }
        let node: Node?
        do {
            // No resolver rules: Yams resolves a scalar's type with regular expressions, most
            // of the time of reading a large file of defines; the scalars are typed below
            // instead, as YAML 1.2's core schema says.
            node = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw Self.syntaxError(error, file: file, text: text)
        } catch {
            throw ServiceRegistry.ConfigurationError(file: file, key: nil, problem: "is not valid YAML: \(error)")
        }
        guard let node else { return APIDefine.Document(root: .object([:])) }
        var reading = Reading(file: file, limit: max(Self.minimumNodeLimit, Self.nodesPerByte * data.count))
        if let mark = node.mark { reading.places[""] = APIDefine.Document.Place(line: mark.line, column: mark.column) }
        let root = try reading.value(of: node, at: "")
        return APIDefine.Document(root: root, places: reading.places)
    }

    /// The fewest values a file may expand to, whatever its size.
    static let minimumNodeLimit = 100_000
    /// How many values a file may expand to for each of its bytes: an alias reads as a copy of
    /// what it names, so a short file of aliases of aliases would expand past any memory (a
    /// "billion laughs"); a file of defines holds far fewer values than bytes.
    static let nodesPerByte = 20

    /// A file's nodes being read into values: where each key stands, and how many values were
    /// made, against the file's limit.
    private struct Reading {
        let file: String
        let limit: Int
        var places: [String: APIDefine.Document.Place] = [:]
        var count = 0

        init(file: String, limit: Int) {
            self.file = file
            self.limit = limit
        }

        /// A node as a JSON value, writing down where each member's key stands.
        mutating func value(of node: Node, at path: String) throws(ServiceRegistry.ConfigurationError) -> JSONValue {
            count += 1
            guard count <= limit else {
                throw YAMLDefineFormat.problem(
                    path.isEmpty ? nil : path,
                    "expands to more than \(limit) values through its aliases (anchors named again with *): write the values out, or name fewer aliases of aliases",
                    at: node.mark, file: file)
            }
            switch node {
            case .scalar(let scalar):
                return YAMLDefineFormat.value(of: scalar)
            case .sequence(let sequence):
                var elements: [JSONValue] = []
                for (index, element) in sequence.enumerated() {
                    elements.append(try value(of: element, at: "\(path)[\(index)]"))
                }
                return .array(elements)
            case .mapping(let mapping):
                var members: [String: JSONValue] = [:]
                for (key, member) in mapping {
                    guard case .scalar(let name) = key else {
                        throw YAMLDefineFormat.problem(path.isEmpty ? nil : path, "has a key that is not a plain name", at: key.mark, file: file)
                    }
                    let memberPath = APIDefine.Document.keyPath(path, name.string)
                    if let mark = key.mark { places[memberPath] = APIDefine.Document.Place(line: mark.line, column: mark.column) }
                    members[name.string] = try value(of: member, at: memberPath)
                }
                return .object(members)
            case .alias:
                throw YAMLDefineFormat.problem(path.isEmpty ? nil : path, "is an alias the reader could not resolve", at: node.mark, file: file)
            }
        }
    }

    /// A scalar's value: a plain one typed as YAML 1.2's core schema types it (`null`, `~` or
    /// nothing; `true`, `false`; whole numbers, decimal, `0x` and `0o`; other numbers, `.inf`,
    /// `.nan`), one with an explicit tag (`!!int 3`) as the tag says, any other a string.
    static func value(of scalar: Node.Scalar) -> JSONValue {
        let text = scalar.string
        switch Tag.Name(rawValue: scalar.tag.rawValue) {
        case .str: return .string(text)
        case .null: return .null
        case .bool: return bool(text).map(JSONValue.bool) ?? .string(text)
        case .int: return integer(text).map(JSONValue.integer) ?? .string(text)
        case .float: return number(text).map(JSONValue.number) ?? .string(text)
        default: break
        }
        guard scalar.style == .plain || scalar.style == .any else { return .string(text) }
        if ["", "~", "null", "Null", "NULL"].contains(text) { return .null }
        if let flag = bool(text) { return .bool(flag) }
        if let whole = integer(text) { return .integer(whole) }
        if let number = number(text) { return .number(number) }
        return .string(text)
    }

    private static func bool(_ text: String) -> Bool? {
        switch text {
        case "true", "True", "TRUE": true
        case "false", "False", "FALSE": false
        default: nil
        }
    }

    private static func integer(_ text: String) -> Int? {
        if text.hasPrefix("0x") { return Int(text.dropFirst(2), radix: 16) }
        if text.hasPrefix("0o") { return Int(text.dropFirst(2), radix: 8) }
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return nil
        }
        return Int(text)
    }

    private static func number(_ text: String) -> Double? {
        switch text {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
        case "-.inf", "-.Inf", "-.INF": return -.infinity
        case ".nan", ".NaN", ".NAN": return .nan
        default: break
        }
        // Digits, a sign, a point and an exponent only: Double(_:) also reads "inf" and hex.
        guard text.utf8.contains(where: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || "+-.eE".utf8.contains($0) })
        else { return nil }
        return Double(text)
    }

    fileprivate static func problem(_ key: String?, _ text: String, at mark: Mark?, file: String) -> ServiceRegistry.ConfigurationError {
        ServiceRegistry.ConfigurationError(file: file, key: key, problem: text, line: mark?.line, column: mark?.column)
    }

    /// The 1-based line and column of the byte at `offset` of `text`.
    private static func place(ofByte offset: Int, in text: String) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in text.utf8.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// A scanner's, parser's or composer's error, located.
    private static func syntaxError(_ error: YamlError, file: String, text: String) -> ServiceRegistry.ConfigurationError {
        switch error {
        case .reader(let problem, let offset, let value, _):
            // A byte the reader refuses (a control character, invalid UTF-8): its place from
            // its offset, which Yams only shows inside its own text.
            let place = Self.place(ofByte: max(offset ?? 0, 0), in: text)
            let byte = value >= 0 ? String(format: " (0x%02X)", value) : ""
            return ServiceRegistry.ConfigurationError(
                file: file, key: nil, problem: "is not valid YAML: \(problem)\(byte)", line: place.line, column: place.column)
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _), .composer(let context, let problem, let mark, _):
            let detail = context.map { "\(problem) (\($0.text))" } ?? problem
            return ServiceRegistry.ConfigurationError(file: file, key: nil, problem: "is not valid YAML: \(detail)", line: mark.line, column: mark.column)
        case .duplicatedKeysInMapping(let duplicates, let context):
            let names = duplicates.map { "\"\($0)\"" }.joined(separator: ", ")
            return ServiceRegistry.ConfigurationError(
                file: file, key: nil, problem: "gives \(names) twice in one mapping", line: context.mark.line, column: context.mark.column)
        default:
            return ServiceRegistry.ConfigurationError(file: file, key: nil, problem: "is not valid YAML: \(error)")
        }
    }
}
#else
#warning("AIFNetworkingYAML is empty: enable the AIFNetworking package's \"YAML\" trait (traits: [\"YAML\"]) to build it")
#endif
