// A program the tests start in a process of its own, for what must happen before anything else
// in a process (libcurl's process-wide initialisation). Usage: aif-test-helper COMMAND ARGS…
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

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "recycle-buffers":
    guard let text = arguments.dropFirst().first, let url = URL(string: text) else {
        FileHandle.standardError.write(Data("usage: aif-test-helper recycle-buffers URL\n".utf8))
        exit(2)
    }
    try await recycleBuffers(url: url)
default:
    FileHandle.standardError.write(Data("usage: aif-test-helper recycle-buffers URL\n".utf8))
    exit(2)
}
