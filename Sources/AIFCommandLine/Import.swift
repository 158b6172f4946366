// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation

/// `aif import`: API defines written from another description of the API.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Write API defines from another description of an API.",
        subcommands: [ImportOpenAPI.self]
    )
}

/// `aif import openapi FILE`: one define per operation of an OpenAPI 3 document.
struct ImportOpenAPI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract: "Write an OpenAPI 3.0 or 3.1 document's operations as API defines (*.apis.json).",
        discussion: """
            Each operation becomes a define named by its operationId: its method, path (relative \
            to the service's base URL and version), the headers that have one value, whether it \
            needs the service's credential, the shape of a JSON answer, and a summary naming its \
            query parameters. What a define cannot hold (cookie parameters, bodies other than \
            JSON or a form, answers other than JSON, callbacks, several servers, references to \
            other files …) is listed, with where it is in the document; nothing is dropped in silence.

            The file written is read back as the registry would read it before the command ends.

            Examples:
              aif import openapi openapi.yaml --service shop
              aif import openapi api.json --service payments --output Configs/payments.apis.json --force
            """
    )

    @Argument(help: "The OpenAPI document (YAML or JSON).")
    var file: String

    @Option(help: "The service the defines call (its name in its config file).")
    var service: String

    @Option(name: [.customShort("o"), .customLong("output")], help: "Where to write the defines (default: Configs/SERVICE.apis.json).")
    var output: String?

    @Flag(help: "Replace the output file if it exists.")
    var force = false

    func run() async throws {
        try await reportingFailures {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw CommandFailure(.configuration, "cannot read \(file): \(error.localizedDescription)")
            }
            let document = try openAPIReader(for: file).read(data, file: file).root
            let imported: OpenAPIImport
            do {
                imported = try OpenAPIImport(document, service: service)
            } catch let failure as CommandFailure {
                throw CommandFailure(failure.failureClass, "\(file): \(failure.description)")
            }
            let target = output ?? "Configs/\(service).apis.json"
            guard target.hasSuffix(".apis.json") else {
                throw CommandFailure(.configuration, "\(target) does not end in .apis.json, which the registry reads defines from")
            }
            guard force || !FileManager.default.fileExists(atPath: target) else {
                throw CommandFailure(.configuration, "\(target) exists: pass --force to replace it, or --output another file")
            }
            let text = try imported.fileText()
            // Written beside the target and read back as the registry will read it; only a file
            // that loads takes the target's place, so that nothing is left that does not.
            let targetURL = URL(fileURLWithPath: target)
            let scratch = targetURL.deletingLastPathComponent().appending(path: ".\(targetURL.lastPathComponent).\(getpid()).apis.json")
            let defines: [APIDefine]
            do {
                try Data(text.utf8).write(to: scratch)
            } catch {
                throw CommandFailure(.configuration, "cannot write \(target): \(error.localizedDescription)")
            }
            do throws(ServiceRegistry.ConfigurationError) {
                defines = try APIDefine.defines(in: scratch)
            } catch {
                try? FileManager.default.removeItem(at: scratch)
                let line = error.line.map { " (line \($0))" } ?? ""
                let problem = "\(error.key.map { "\($0)\(line): " } ?? "")\(error.problem)"
                throw CommandFailure(.configuration, "\(file): the defines made from it would not load (\(problem)); nothing was written")
            }
            // rename(2) puts it in place at once, replacing what was there (with --force).
            guard rename(scratch.path, target) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: scratch)
                throw CommandFailure(.configuration, "cannot write \(target): \(reason)")
            }
            print("Wrote \(defines.count) defines of service \"\(service)\" to \(target).")
            if let note = imported.serverNote { print("Note: \(note).") }
            if imported.unsupported.isEmpty {
                print("Everything in the document is in the defines.")
            } else {
                print("Not in the defines (\(imported.unsupported.count)):")
                for item in imported.unsupported { print("  \(item)") }
            }
        }
    }
}
#endif
