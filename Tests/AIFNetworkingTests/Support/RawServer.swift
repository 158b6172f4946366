import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP server on 127.0.0.1 for misbehaviour a real HTTP server will not produce: cutting a
/// response short, never answering, or acting as an HTTP proxy. One thread accepts; each
/// connection is handled on a thread of its own (tests open only a few).
final class RawServer: Sendable {
    enum Behaviour: Sendable {
        /// Read the request head, promise `promised` body bytes, send `sent`, then close.
        case dropMidBody(promised: Int, sent: Int)
        /// Accept and read, never write; hold the connection until the server stops.
        case silent
        /// Answer like a forward proxy: the body is the request line received.
        case echoRequestLine
    }

    let port: Int
    private let listener: Int32
    private let state = Locked(State())

    private struct State {
        var clients: [Int32] = []
        var requestLines: [String] = []
        var stopped = false
    }

    init(_ behaviour: Behaviour) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        var one: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 64) == 0 else {
            close(socket)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = socket

        let thread = Thread { [self] in
            acceptLoop(behaviour)
        }
        thread.start()
    }

    /// The request lines received so far (for ``Behaviour/echoRequestLine``).
    var requestLines: [String] {
        state.withLock { $0.requestLines }
    }

    /// Closes the listener and every connection.
    func stop() {
        let clients = state.withLock { state in
            state.stopped = true
            return state.clients
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for client in clients { shutdown(client, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop(_ behaviour: Behaviour) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            let accepted = state.withLock { state -> Bool in
                if state.stopped { return false }
                state.clients.append(client)
                return true
            }
            guard accepted else {
                close(client)
                return
            }
            let thread = Thread { [self] in
                handle(client, behaviour)
            }
            thread.start()
        }
    }

    private func handle(_ client: Int32, _ behaviour: Behaviour) {
        let head = readHead(client)
        switch behaviour {
        case .dropMidBody(let promised, let sent):
            write(client, "HTTP/1.1 200 OK\r\nContent-Length: \(promised)\r\nContent-Type: application/octet-stream\r\n\r\n")
            write(client, String(repeating: "x", count: sent))
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
        case .silent:
            // Hold the connection open and quiet until the peer or stop() closes it.
            var buffer = [UInt8](repeating: 0, count: 1024)
            while recv(client, &buffer, buffer.count, 0) > 0 {}
            close(client)
        case .echoRequestLine:
            let line = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
            state.withLock { $0.requestLines.append(line) }
            write(client, "HTTP/1.1 200 OK\r\nContent-Length: \(line.utf8.count)\r\nConnection: close\r\n\r\n\(line)")
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
        }
    }

    /// Reads until the blank line that ends a request head (or the peer closes).
    private func readHead(_ client: Int32) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.isEmpty ? !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") : true {
            let count = recv(client, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }

    private func write(_ client: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { send(client, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// A port on 127.0.0.1 where nothing listens: bound, then closed again.
    static func closedPort() throws -> Int {
        let server = try RawServer(.silent)
        server.stop()
        return server.port
    }
}
