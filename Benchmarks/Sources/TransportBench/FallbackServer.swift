import BenchSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 server on SwiftNIO that answers every request with ``BenchPayload/json``: the
/// comparison's server when nginx is not installed.
enum FallbackServer {
    static func run(port: Int) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(PayloadHandler())
                }
            }
        let channel = try bootstrap.bind(host: "127.0.0.1", port: port).wait()
        try channel.closeFuture.wait()
    }

    private final class PayloadHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: "\(BenchPayload.json.utf8.count)")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: BenchPayload.json)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
