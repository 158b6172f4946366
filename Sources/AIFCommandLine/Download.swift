// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
import ArgumentParser
import Foundation
@_spi(CrossModule) import AIFTransport

/// `aif download SERVICE METHOD-NAME --output PATH …`: downloads a response body to a file.
struct Download: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download a response body to a file through a configured service, resuming what an earlier run left.",
        discussion: """
            A signed GET as a manager load: a failed attempt is retried as the service's retry \
            policy says, asking only for the rest of the file; so is a later run to the same \
            output (the partial file and its record stay beside it). The file appears at \
            --output only when complete (and matching --sha256). Progress goes to standard \
            error (one line redrawn on a terminal, a plain line a second otherwise); the path \
            and size to standard output at the end.

            Examples:
              aif download shop exports/{name} --param name=goods.csv -o goods.csv
              aif download shop exports/{name} --param name=goods.csv -o goods.csv --limit-rate 2M --sha256 9f86d0…

            \(FailureClass.helpText)
            """
    )

    @OptionGroup var options: ServiceOptions

    @Option(name: [.customShort("o"), .customLong("output")], help: "Where the file goes; its folder must exist.")
    var output: String

    @Option(help: "The file's SHA-256 in hexadecimal, checked before the file is moved into place.")
    var sha256: String?

    @Option(name: .customLong("limit-rate"), help: "The most bytes a second (suffixes K, M: 512K, 2M).")
    var limitRate: String?

    @Flag(help: "Remove the partial file when the download fails (kept for resuming by default).")
    var discardPartial = false

    func validate() throws {
        if options.recordDirectory != nil {
            throw ValidationError("--record writes a response as a fixture; a download's body goes to its file and is not recorded")
        }
        if let limitRate, Self.bytes(limitRate) == nil {
            throw ValidationError("--limit-rate \(limitRate) is not a number of bytes (512K, 2M, 1000)")
        }
    }

    /// `512K`, `2M`, `1000` as bytes.
    static func bytes(_ text: String) -> Int? {
        let multiplier = switch text.last?.uppercased() {
        case "K": 1 << 10
        case "M": 1 << 20
        case "G": 1 << 30
        default: 1
        }
        let digits = multiplier == 1 ? Substring(text) : text.dropLast()
        guard let value = Int(digits), value > 0 else { return nil }
        return value * multiplier
    }

    func run() async throws {
        try await reportingFailures(download)
    }

    private func download() async throws {
        let (registry, resolved) = try options.resolve()
        let endpoint = Endpoint<NoContent>(
            service: resolved.service.name, path: options.path, headers: try options.headerFields(), timeouts: options.timeouts)
        let (manager, transport) = options.manager(endpoint, registry: registry, resolved: resolved)
        defer { transport.shutdown() }
        let target = FileDownload(to: URL(fileURLWithPath: output), expectedSHA256: sha256, keepsPartialFile: !discardPartial)
        let control = limitRate.flatMap(Self.bytes).map { TransferControl(maxBytesPerSecond: $0) }
        let onTerminal = isatty(STDERR_FILENO) == 1
        let parameters = try options.parameters()
        // On a terminal, one line redrawn as bytes come; otherwise a plain line a second.
        let lastLine = Locked<ContinuousClock.Instant?>(nil)
        do {
            let file = try await manager.download(parameters, to: target, control: control) { progress in
                let total = progress.totalBytesToReceive.map { " of \($0)" } ?? ""
                let percent = progress.fractionCompleted.map { String(format: " (%.0f%%)", $0 * 100) } ?? ""
                let rate = progress.bytesPerSecond.map { String(format: ", %.1f MiB/s", $0 / 1_048_576) } ?? ""
                let line = "\(progress.bytesReceived)\(total) bytes\(percent)\(rate)"
                if onTerminal {
                    FileHandle.standardError.write(Data("\r\(line)   ".utf8))
                    return
                }
                let now = ContinuousClock.now
                let due = lastLine.withLock { last in
                    guard last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
                    last = now
                    return true
                }
                if due { printError(line) }
            }
            if onTerminal { printError("") }
            options.describe(statusCode: file.response.statusCode, headers: file.response.headers, metrics: file.response.metrics, attempts: 1)
            print("\(file.url.path) \(file.byteCount) bytes" + (file.resumedAt > 0 ? " (\(file.resumedAt) from an earlier attempt)" : "")
                + (file.sha256.map { " sha256 \($0)" } ?? ""))
        } catch {
            if onTerminal { printError("") }
            if let response = error.response { options.describe(statusCode: response.statusCode, headers: response.headers, metrics: response.metrics, attempts: error.attempts) }
            printError("aif: \(error)")
            let kept = (try? FileManager.default.attributesOfItem(atPath: target.partialFile.path)[.size] as? Int) ?? 0
            if kept > 0 { printError("aif: \(kept) bytes kept in \(target.partialFile.path); run the same command again to resume") }
            throw FailureClass(error).exitCode
        }
    }
}
#endif
