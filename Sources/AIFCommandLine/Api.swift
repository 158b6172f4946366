// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation

/// `aif api NAME key=value … [options of aif call]`: calls an API defined by name, as `aif call`
/// with the define's service, path, method, headers, default parameters and timeout.
struct Api: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Call an API defined by name in a *.apis.json file (aif apis lists them).",
        discussion: """
            The define gives the service, path, method, headers, default parameters and timeout; \
            the key=value arguments right after the name are the call's parameters (over the \
            define's), and every option of aif call follows them: --env, -H, --json, -d, --form, \
            -i, --raw, --curl, --all-pages (which reads the items from the define's dataField), \
            --record, -v. A path placeholder no parameter fills is reported before anything is sent.

            Examples:
              aif api goods.detail id=42
              aif api goods.list page=2 -i
              aif api goods.list --all-pages | wc -l
              aif api orders.place --json '{"goods_id": 42, "quantity": 2}'
              aif api goods.detail id=42 --curl

            \(FailureClass.helpText)
            """
    )

    @Argument(help: "The define's name.", completion: .custom { _, _, _ in Api.definedNames() })
    var name: String

    @Argument(parsing: .captureForPassthrough, help: "key=value parameters, then options of aif call.")
    var arguments: [String] = []

    func run() async throws {
        var call: Call
        do {
            let translated = try callArguments()
            do {
                call = try Call.parse(translated)
            } catch {
                // Told as aif call would tell it, naming this command.
                printError("aif api: " + Call.message(for: error))
                throw ExitCode(Call.exitCode(for: error).rawValue)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            try await reportingFailures { throw error }
            return
        }
        try await call.run()
    }

    /// The arguments of the `aif call` this command stands for.
    func callArguments() throws -> [String] {
        let given = arguments.prefix { !$0.hasPrefix("-") }
        let options = Array(arguments.dropFirst(given.count))
        var parameters: [(key: String, value: String)] = []
        for pair in given {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("\(pair) is not a parameter (key=value); parameters come right after the API's name, options after them")
            }
            parameters.append((String(pair[..<equals]), String(pair[pair.index(after: equals)...])))
        }
        let define = try Self.define(named: name, configs: Self.values(of: "--config", in: options))

        let passedKeys = Set(parameters.map(\.key) + Self.values(of: "--param", in: options).compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        let defaults = define.parameters.filter { !passedKeys.contains($0.key) }
        if let missing = define.placeholders.first(where: { !passedKeys.contains($0) && defaults[$0] == nil }) {
            throw CommandFailure(
                .configuration,
                "the API \(define.name) (\(define.file)) has {\(missing)} in its path \(define.path), and no parameter fills it: add \(missing)=VALUE")
        }
        var call = [define.service.rawValue, define.path.isEmpty ? "/" : define.path, "--method", define.method.rawValue]
        let passedHeaders = Set((Self.values(of: "--header", in: options) + Self.values(of: "-H", in: options)).compactMap {
            $0.split(separator: ":", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        })
        for field in define.headers where !passedHeaders.contains(field.name.lowercased()) {
            call += ["--header", "\(field.name): \(field.value)"]
        }
        // A parameter the define places under another name in the query or the body is passed
        // under that name; the others are placed as the define says.
        func wireName(_ key: String) -> String {
            guard let placement = define.parameterPlacements[key], placement.location == .query || placement.location == .body else { return key }
            return placement.name ?? key
        }
        for (key, value) in defaults.sorted(by: { $0.key < $1.key }) {
            for text in try Self.texts(of: value, key: key, define: define) { call += ["--param", "\(wireName(key))=\(text)"] }
        }
        for (key, value) in parameters { call += ["--param", "\(wireName(key))=\(value)"] }
        for (key, placement) in define.parameterPlacements.sorted(by: { $0.key < $1.key }) {
            var unnamed = placement
            if placement.location == .query || placement.location == .body { unnamed.name = nil }
            guard let text = Call.placementArgument(unnamed) else {
                throw CommandFailure(.configuration, "the API \(define.name) (\(define.file)) places \(key) as aif api cannot: \(placement)")
            }
            call += ["--place", "\(wireName(key))=\(text)"]
        }
        if let timeout = define.timeout, Self.values(of: "--timeout", in: options).isEmpty {
            call += ["--timeout", String(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)]
        }
        if options.contains("--all-pages") {
            // The define's paging (else its service's, which aif call reads itself), and its
            // items where the define's content is.
            func unless(_ option: String, _ value: String?) {
                if let value, Self.values(of: option, in: options).isEmpty { call += [option, value] }
            }
            if let paging = define.paging {
                unless("--paging", paging.style.rawValue)
                unless("--page-param", paging.parameter)
                unless("--id-key", paging.idField)
                unless("--has-more-key", paging.hasMoreField)
            }
            unless("--items-key", define.paging?.itemsField ?? define.response.dataField)
        }
        return call + options
    }

    /// The define named `name` in the config files of `configs`; one naming a service no config
    /// file defines is refused, located in its file.
    static func define(named name: String, configs: [String]) throws -> APIDefine {
        let files = try configFiles(configs)
        var defines: [APIDefine] = []
        for file in files.defines { defines += try APIDefine.defines(in: file, formats: defineFormats) }
        guard let define = defines.first(where: { $0.name == name }) else {
            if defines.isEmpty { throw CommandFailure(.configuration, "no API is defined as \"\(name)\": no *.apis.json file in \(configs.isEmpty ? "Configs" : configs.joined(separator: ", "))") }
            throw CommandFailure(.configuration, "no API is defined as \"\(name)\"" + suggestion(for: name, among: defines.map(\.name)))
        }
        let services = serviceNames(in: files.services)
        if !services.contains(define.service) {
            // Read again checking the services: the error names the file, line and column.
            _ = try APIDefine.defines(in: URL(fileURLWithPath: define.file), formats: defineFormats, services: services)
        }
        return define
    }

    /// A default parameter as `--param` values: a scalar once, an array's scalars each.
    private static func texts(of value: JSONValue, key: String, define: APIDefine) throws -> [String] {
        if let text = value.textValue { return [text] }
        if case .array(let elements) = value {
            let texts = elements.compactMap(\.textValue)
            if texts.count == elements.count { return texts }
        }
        if case .null = value { return [] }
        throw CommandFailure(.configuration, "the API \(define.name) (\(define.file)) has a default parameter \(key) that is an object, which aif api cannot send as --param: give it with --json")
    }

    /// The values an option is given with, as `--name value` or `--name=value`.
    static func values(of option: String, in arguments: [String]) -> [String] {
        var values: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == option, index + 1 < arguments.endIndex {
                values.append(arguments[index + 1])
                index += 2
                continue
            }
            if argument.hasPrefix(option + "=") { values.append(String(argument.dropFirst(option.count + 1))) }
            index += 1
        }
        return values
    }

    /// The names defined in `Configs/` of the working folder, for shell completion (none when
    /// the files cannot be read).
    static func definedNames() -> [String] {
        guard let files = try? configFiles([]).defines else { return [] }
        return files.flatMap { (try? APIDefine.defines(in: $0, formats: defineFormats)) ?? [] }.map(\.name).sorted()
    }
}
#endif
