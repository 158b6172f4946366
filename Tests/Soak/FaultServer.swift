import Foundation
import NIOCore
import NIOPosix

/// A loopback HTTP/1.1 server that misbehaves on request, by path:
///
/// | Path | Answer |
/// |---|---|
/// | `/ok` | `200` and a small JSON body, kept alive |
/// | `/status/503` | `503` and a small JSON body, kept alive |
/// | `/sometimes` | `503` or `200`, one in two, kept alive |
/// | `/reset` | a `200` head promising 1,000 bytes, 100 of them, then a TCP reset |
/// | `/garbage` | a status line that is not one, then close |
/// | `/truncated` | a chunked `200` cut off inside its first chunk |
/// | `/slow` | `200` after two seconds (past the soak's one-second timeout) |
///
/// With `silent`, it accepts connections and never writes a byte: a TLS handshake that stalls.
final class FaultServer: Sendable {
    let port: Int
    private let channel: any Channel

    init(group: any EventLoopGroup, silent: Bool = false) async throws {
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if !silent { try channel.pipeline.syncOperations.addHandler(FaultHandler()) }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    func stop() async {
        try? await channel.close()
    }
}

/// Reads each request head and answers as its path says.
private final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var received = ""

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received += buffer.readString(length: buffer.readableBytes) ?? ""
        while let end = received.range(of: "\r\n\r\n") {
            let head = received[..<end.lowerBound]
            received.removeSubrange(..<end.upperBound)
            let target = head.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
            let path = String(target.prefix { $0 != "?" })
            if !answer(path, context: context) { return }
        }
    }

    /// Answers one request; returns whether the connection stays open for the next.
    private func answer(_ path: String, context: ChannelHandlerContext) -> Bool {
        switch path {
        case "/ok":
            write(Self.response(200), context)
        case "/status/503":
            write(Self.response(503), context)
        case "/sometimes":
            write(Self.response(Bool.random() ? 503 : 200), context)
        case "/reset":
            write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: application/json\r\n\r\n" + String(repeating: " ", count: 100), context)
            // Linger 0: the close sends a reset instead of a FIN.
            guard let options = context.channel as? any SocketOptionProvider else {
                context.close(promise: nil)
                return false
            }
            let channel = context.channel
            options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
            return false
        case "/garbage":
            write("HTTP/1.1 twohundred fine\r\nwhat: is this\r\n\r\n{}", context)
            context.close(promise: nil)
            return false
        case "/truncated":
            write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n40\r\n{\"ok\":", context)
            context.close(promise: nil)
            return false
        case "/slow":
            let channel = context.channel
            context.eventLoop.scheduleTask(in: .seconds(2)) {
                if channel.isActive {
                    channel.writeAndFlush(ByteBuffer(string: Self.response(200)), promise: nil)
                }
            }
        default:
            write(Self.response(404), context)
        }
        return true
    }

    private func write(_ text: String, _ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
    }

    private static func response(_ status: Int) -> String {
        let body = status == 200 ? #"{"ok":true}"# : #"{"code":\#(status)0,"message":"fault"}"#
        return "HTTP/1.1 \(status) Fault\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
