// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation

/// The `aif` command line, which the `aif` executable runs (with the package's
/// `CommandLineTool` trait).
public enum AifCommandLine {
    /// Runs `aif` with the process's arguments, and exits as the command ends.
    public static func run() async {
        await Aif.main()
    }
}

/// `aif`: try a service configuration from the shell.
struct Aif: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aif",
        abstract: "Send requests through AIFNetworking services defined in config files.",
        discussion: """
            Examples:
              aif services
              aif apis
              aif call shop goods/{id} --param id=42
              aif api goods.detail id=42
              aif download shop exports/{name} --param name=goods.csv -o goods.csv
              aif doctor
              aif import openapi openapi.yaml --service shop

            Shell completion: aif --generate-completion-script bash (or zsh, fish).
            """,
        version: "aif \(aifNetworkingVersion) (libcurl \(Self.libcurl))",
        subcommands: [Services.self, Apis.self, Call.self, Api.self, Download.self, Doctor.self, Import.self]
    )

    /// Runs the command line, first catching a mistyped subcommand with a suggestion.
    /// The libcurl loaded and its TLS library (`7.88.1, OpenSSL/3.0.17`).
    static var libcurl: String {
        let library = CurlTransport.Library.current
        return ([library.version] + [library.tlsLibrary].compactMap { $0 }).joined(separator: ", ")
    }

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let names = configuration.subcommands.compactMap { $0.configuration.commandName }
        if let first = arguments.first, !first.hasPrefix("-"), !names.contains(first), first != "help" {
            printError("aif: \"\(first)\" is not a command" + suggestion(for: first, among: names))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        await main(arguments)
    }
}
#endif
