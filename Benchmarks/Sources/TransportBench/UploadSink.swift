import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The upload benchmark's server: takes each request's `Content-Length` body and drops it,
/// answering `100 Continue` when asked and then `200` with the count of bytes that came — the
/// least work a server can do with an upload, so that the clients are what is measured. One
/// thread per connection (the benchmark opens one at a time).
enum UploadSink {
    static func run(port: Int) throws -> Never {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { throw BenchSetupError(description: "the upload sink cannot listen on port \(port)") }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            Thread { serve(client) }.start()
        }
    }

    private static func serve(_ client: Int32) {
        defer { close(client) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            // The head, then what of the body came with it.
            var received: [UInt8] = []
            var headEnd: Int?
            while headEnd == nil {
                let count = recv(client, &buffer, buffer.count, 0)
                if count <= 0 { return }
                received.append(contentsOf: buffer[0..<count])
                headEnd = find([13, 10, 13, 10], in: received)
            }
            let head = String(decoding: received[..<headEnd!], as: UTF8.self).lowercased()
            let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            if head.contains("expect: 100-continue") { send(client, "HTTP/1.1 100 Continue\r\n\r\n") }
            var count = received.count - headEnd! - 4
            while count < length {
                let got = recv(client, &buffer, buffer.count, 0)
                if got <= 0 { return }
                count += got
            }
            let answer = "\(count)"
            send(client, "HTTP/1.1 200 OK\r\nContent-Length: \(answer.utf8.count)\r\nContent-Type: text/plain\r\n\r\n\(answer)")
        }
    }

    private static func find(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<$0 + pattern.count].elementsEqual(pattern) }
    }

    private static func send(_ client: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.send(client, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }
}
