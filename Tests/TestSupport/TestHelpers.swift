@_spi(CrossModule) @testable import AIFTransport
import AIFNetworkingTesting
import Foundation
import Logging

extension LocalServer {
    /// The URL of `path` on this server.
    func url(_ path: String, secure: Bool = false) -> URL {
        URL(string: baseURL(secure: secure).absoluteString + "/" + path)!
    }
}

/// A transport for one test, shut down by the caller.
func makeTransport(_ configure: (inout CurlTransport.Configuration) -> Void = { _ in }) -> CurlTransport {
    var configuration = CurlTransport.Configuration(proxy: .none)
    configure(&configuration)
    return CurlTransport(configuration: configuration)
}

/// Sends through the completion-handler face and returns the result, recording how many times
/// the completion ran so tests can check it was exactly once.
func sendWithCompletion(
    _ transport: CurlTransport,
    _ request: AIFTransport.HTTPRequest,
    calls: Locked<Int> = Locked(0)
) async -> Result<AIFTransport.HTTPResponse, TransportError> {
    await withCheckedContinuation { continuation in
        transport.send(request) { result in
            let first = calls.withLock { count -> Bool in
                count += 1
                return count == 1
            }
            if first { continuation.resume(returning: result) }
        }
    }
}

extension Result where Failure == TransportError {
    var error: TransportError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A log handler that keeps what it is given, to check what the library logs.
struct CapturingLogHandler: LogHandler {
    let messages: Locked<[(Logger.Level, String)]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.withLock { $0.append((event.level, "\(event.message)")) }
    }
}

/// A SHA-256 fed in pieces, for test servers that must not keep what they hash (their module
/// cannot import the library's `StreamingHash` beside Hummingbird's `HTTPRequest`).
final class RunningSHA256 {
    private var hash = StreamingHash(.sha256)

    func update(_ bytes: UnsafeRawBufferPointer) { hash.update(bytes) }

    /// The digest in lowercase hexadecimal; call once, at the end.
    func hex() -> String {
        var done = StreamingHash(.sha256)
        swap(&done, &hash)
        return done.finish().map { String(format: "%02x", $0) }.joined()
    }
}

/// A new empty folder of the test's own under the temporary folder; the test removes it.
///
/// - Parameter prefix: Names what it is for (`download`, `upload`…).
func makeTestFolder(_ prefix: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appending(path: "aif-\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// Whether this process runs under the thread sanitizer (its runtime is linked in).
let isUnderThreadSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil

/// The test helper program, built beside the tests.
let helperPath: String = {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    // `swift test` runs the tests from inside the .xctest bundle on some platforms.
    while directory.path != "/", !FileManager.default.fileExists(atPath: directory.appending(path: "aif-test-helper").path) {
        directory = directory.deletingLastPathComponent()
    }
    return directory.appending(path: "aif-test-helper").path
}()

extension Result {
    /// The failure, if this is one.
    package var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
