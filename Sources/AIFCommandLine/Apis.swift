// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation

/// `aif apis`: lists the APIs the `*.apis.json` files define.
struct Apis: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apis",
        abstract: "List the APIs the config files define by name: method, path, service, group.",
        discussion: """
            Reads the *.apis.json (and *.apis.yaml) files beside the services' (Configs/ by default). A file that \
            cannot be read, or that defines an API of a service no config file defines, is \
            reported after the others (file, line and column), and the command then exits with \
            status 2 (configuration).

            Examples:
              aif apis
              aif api goods.detail id=42

            \(FailureClass.helpText)
            """
    )

    @Option(name: .customLong("config"), help: "A config file or a folder of them (repeatable; default: Configs/).")
    var configs: [String] = []

    func run() async throws {
        try await reportingFailures {
            var defines: [APIDefine] = []
            var problems: [String] = []
            let files = try configFiles(configs)
            let services = serviceNames(in: files.services)
            for file in files.defines {
                do {
                    defines += try APIDefine.defines(in: file, formats: defineFormats, services: services)
                } catch {
                    problems.append("\(error)")
                }
            }
            if defines.isEmpty && problems.isEmpty {
                print("no API define files (*.apis.json) in \(configs.isEmpty ? "Configs" : configs.joined(separator: ", "))")
            }
            print(Self.table(defines.sorted { $0.name < $1.name }), terminator: "")
            for problem in problems { printError("aif: \(problem)") }
            if !problems.isEmpty { throw FailureClass.configuration.exitCode }
        }
    }

    /// One line per define: name, method, path, service and group in columns, then its summary.
    static func table(_ defines: [APIDefine]) -> String {
        guard !defines.isEmpty else { return "" }
        let rows = [["NAME", "METHOD", "PATH", "SERVICE", "GROUP", "SUMMARY"]]
            + defines.map { [$0.name, $0.method.rawValue, $0.path.isEmpty ? "/" : $0.path, $0.service.rawValue, $0.group ?? "-", $0.summary ?? ""] }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            let padded = (0..<5).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
            return (padded + "  " + row[5]).trimmingCharacters(in: .whitespaces) + "\n"
        }.joined()
    }
}
#endif
