import ArgumentParser

/// `aif`: try a service configuration from the shell.
@main
struct Aif: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aif",
        abstract: "Send requests through AIFNetworking services defined in config files.",
        subcommands: [Call.self, Download.self]
    )
}
