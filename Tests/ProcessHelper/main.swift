// A program the tests start in a process of its own, for what must happen before anything else
// in a process (libcurl's process-wide initialisation), or be measured alone (its memory).
// Usage: aif-test-helper COMMAND ARGS…
import AIFNetworking
import Foundation

/// `recycle-buffers URL`: opts in to recycled transfer buffers, then fetches URL 20 times.
func recycleBuffers(url: URL) async throws {
    let installed = CurlTransport.recycleLibcurlTransferBuffers()
    let transport = CurlTransport(configuration: .init(proxy: .none))
    defer { transport.shutdown() }
    var bytes = 0
    for _ in 0..<20 {
        bytes += try await transport.send(HTTPRequest(url: url)).body.count
    }
    print("installed=\(installed) again=\(CurlTransport.recycleLibcurlTransferBuffers()) bytes=\(bytes)")
}

/// `download URL PATH`: downloads URL to PATH and prints how far the process's peak resident
/// memory rose above what it was before the download.
func download(url: URL, to path: String) async throws {
    let transport = CurlTransport(configuration: .init(proxy: .none))
    defer { transport.shutdown() }
    _ = try await transport.send(HTTPRequest(method: .head, url: url))   // libcurl and the loop warmed up
    let before = peakResidentKiB()
    let target = FileDownload(to: URL(fileURLWithPath: path))
    do {
        let file = try await transport.download(HTTPRequest(url: url), to: target)
        print("bytes=\(file.byteCount) peak-growth-kib=\(peakResidentKiB() - before)")
    } catch {
        // What a caller would see and find: the error, and what is left on disk.
        let partial = (try? FileManager.default.attributesOfItem(atPath: target.partialFile.path)[.size] as? Int) ?? -1
        print("failed partial-bytes=\(error.partialBytes) partial-file-bytes=\(partial) destination-exists=\(FileManager.default.fileExists(atPath: path))")
        print("error: \(error)")
        exit(1)
    }
}

/// `upload URL PATH`: posts the file at PATH as the one file of a multipart form, and prints
/// the answer's body (the test server's digest of what arrived) and how far the process's
/// peak resident memory rose during the upload.
func upload(url: URL, file path: String) async throws {
    let transport = CurlTransport(configuration: .init(proxy: .none))
    defer { transport.shutdown() }
    _ = try await transport.send(HTTPRequest(method: .head, url: url))
    let before = peakResidentKiB()
    var form = MultipartForm()
    form.append("kind", "backup")
    form.appendFile("file", at: path)
    let response = try await transport.send(HTTPRequest(method: .post, url: url, body: .multipart(form)))
    print("status=\(response.statusCode) answer=\(String(decoding: response.body, as: UTF8.self).replacingOccurrences(of: " ", with: ",")) peak-growth-kib=\(peakResidentKiB() - before)")
}

/// The process's peak resident memory so far, in KiB.
func peakResidentKiB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss
}

let usage = "usage: aif-test-helper recycle-buffers URL | download URL PATH | upload URL PATH\n"
let arguments = Array(CommandLine.arguments.dropFirst())

/// Exits with the usage unless the arguments after the command are `count` of them, the first a URL.
func urlAndRest(count: Int) -> (URL, [String]) {
    let rest = Array(arguments.dropFirst())
    guard rest.count == count, let url = URL(string: rest[0]) else {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
    return (url, Array(rest.dropFirst()))
}

switch arguments.first {
case "recycle-buffers":
    try await recycleBuffers(url: urlAndRest(count: 1).0)
case "download":
    let (url, rest) = urlAndRest(count: 2)
    try await download(url: url, to: rest[0])
case "upload":
    let (url, rest) = urlAndRest(count: 2)
    try await upload(url: url, file: rest[0])
default:
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
