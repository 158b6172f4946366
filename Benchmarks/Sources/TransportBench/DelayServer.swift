import BenchSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on SwiftNIO that answers every request with ``BenchPayload/json`` after a
/// fixed delay: the scale comparison's server, where most transfers sit idle waiting for their
/// answer, as with slow APIs, long polls or a service fanning out.
enum DelayServer {
    static func run(port: Int, delayMilliseconds: Int) throws {
        raiseDescriptorLimit()
        let delay = TimeAmount.milliseconds(Int64(delayMilliseconds))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 8192)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(DelayedPayloadHandler(delay: delay))
                }
            }
        let channel = try bootstrap.bind(host: "127.0.0.1", port: port).wait()
        try channel.closeFuture.wait()
    }

    private final class DelayedPayloadHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let delay: TimeAmount

        init(delay: TimeAmount) {
            self.delay = delay
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            let context = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.value.eventLoop.scheduleTask(in: delay) {
                let context = context.value
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "application/json")
                headers.add(name: "Content-Length", value: "\(BenchPayload.json.utf8.count)")
                context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: BenchPayload.json)))), promise: nil)
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
            }
        }
    }
}

/// Lifts this process's open-file limit to its hard limit: thousands of connections need
/// thousands of descriptors, and the usual soft limit is 1,024.
func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
