import AIFTransport
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// A request context that remembers which client port the request came from, so tests can see
/// from the server's side whether two requests shared a connection.
struct ConnectionContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remotePort: Int

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remotePort = source.channel.remoteAddress?.port ?? -1
    }
}

/// The routes the transport tests exercise.
enum TestRoutes {
    static let gzipPlainText = String(repeating: "AIFNetworking decodes gzip transparently. ", count: 200)

    /// What `events` sends, piece by piece.
    static let eventStreamPieces = [
        "\u{FEFF}: a comment, then the first event\r\nretry: 1500\r\nda", "ta: first\r", "\n\r\nevent: price\nid: 7\ndata: 12.5\ndata: EUR\n\n",
        "data\n\nid: 8\n: no data, no event\n\n", "event: last\rdata:  two spaces\r\r",
    ]

    /// Returns once the task is cancelled (the client gone, or the server stopping).
    static func holdUntilCancelled() async {
        let (forever, continuation) = AsyncStream<Never>.makeStream()
        for await _ in forever {}
        continuation.finish()
    }

    /// The routes, and those `extraRoutes` adds (the layers above add their own).
    static func makeRouter(gzippedBody: Data, adding extraRoutes: (Router<ConnectionContext>) -> Void = { _ in }) -> Router<ConnectionContext> {
        let router = Router(context: ConnectionContext.self)

        let methods: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .head, .options, HTTPRequest.Method("PURGE")!]
        for method in methods {
            router.on("echo", method: method) { request, _ -> Response in
                let body = try await request.body.collect(upTo: 128 << 20)
                var headers: HTTPFields = [:]
                headers[HTTPField.Name("X-Method")!] = request.method.rawValue
                headers[HTTPField.Name("X-Target")!] = request.head.path ?? ""
                headers[HTTPField.Name("X-Body-Length")!] = "\(body.readableBytes)"
                if let type = request.headers[.contentType] { headers[HTTPField.Name("X-Request-Content-Type")!] = type }
                if let expect = request.headers[.expect] { headers[HTTPField.Name("X-Request-Expect")!] = expect }
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
            }
        }

        // Takes a body of any size as it arrives, keeping none of it: answers its length and
        // SHA-256, and the request's Content-Type.
        router.on("digest", method: .post) { request, _ -> Response in
            let hash = RunningSHA256()
            var length = 0
            for try await chunk in request.body {
                chunk.withUnsafeReadableBytes { hash.update($0) }
                length += chunk.readableBytes
            }
            let hex = hash.hex()
            let type = request.headers[.contentType] ?? "-"
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "\(length) \(hex) \(type)")))
        }

        // Request headers back as `name: value` lines, plus two Set-Cookie fields.
        router.get("headers") { request, _ -> Response in
            let lines = request.headers.map { "\($0.name.canonicalName): \($0.value)" }.joined(separator: "\n")
            var headers: HTTPFields = [:]
            headers.append(HTTPField(name: .setCookie, value: "a=1"))
            headers.append(HTTPField(name: .setCookie, value: "b=2"))
            headers[HTTPField.Name("X-Custom-Reply")!] = "Mixed Case Value"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: lines)))
        }

        // The authority the request named (its `Host`), which the header lines above leave out.
        router.get("authority") { request, _ -> String in
            request.head.authority ?? "-"
        }

        // `count` bytes of a known pattern.
        let patternBuffer = ByteBuffer(bytes: patternBytes)
        router.get("bytes/:count") { _, context -> Response in
            let count = min(context.parameters.get("count", as: Int.self) ?? 0, patternBuffer.readableBytes)
            return Response(status: .ok, body: .init(byteBuffer: patternBuffer.getSlice(at: 0, length: count)!))
        }

        router.get("gzip") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentEncoding: "gzip", .contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(bytes: gzippedBody))
            )
        }

        // The redirect matrix: `hop/:status?to=URL` answers any method with that status and
        // `Location: URL`; `landing` answers any method with what arrived (method, body, and
        // the headers a redirect may or may not carry along).
        for method in methods {
            router.on("hop/:status", method: method) { request, context -> Response in
                _ = try await request.body.collect(upTo: 1 << 20)
                let status = context.parameters.get("status", as: Int.self) ?? 302
                let target = request.uri.queryParameters.get("to") ?? "/landing"
                return Response(status: .init(code: status), headers: [.location: target])
            }
            router.on("landing", method: method) { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                var headers: HTTPFields = [:]
                headers[HTTPField.Name("X-Method")!] = request.method.rawValue
                headers[HTTPField.Name("X-Target")!] = request.head.path ?? ""
                headers[HTTPField.Name("X-Body-Length")!] = "\(body.readableBytes)"
                for name in ["Authorization", "Cookie", "Content-Type", "X-Custom", "X-Signature"] {
                    let value = request.headers[HTTPField.Name(name)!]
                    headers[HTTPField.Name("X-Got-" + name)!] = value ?? "-"
                }
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
            }
        }

        // A redirect that takes its time: sleeps, then `302` to `to`.
        router.get("slow-hop/:milliseconds") { request, context -> Response in
            try await Task.sleep(for: .milliseconds(context.parameters.get("milliseconds", as: Int.self) ?? 0))
            return Response(status: .found, headers: [.location: request.uri.queryParameters.get("to") ?? "/landing"])
        }

        router.get("redirect/:hops") { _, context -> Response in
            let hops = context.parameters.get("hops", as: Int.self) ?? 0
            if hops <= 0 { return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "landed"))) }
            return Response(status: .found, headers: [.location: "/redirect/\(hops - 1)"])
        }
        router.get("redirect-signed") { _, _ -> Response in
            Response(status: .found, headers: [.location: "/verify/aif/landing?from=redirect"])
        }
        router.post("redirect-signed") { _, _ -> Response in
            Response(status: .temporaryRedirect, headers: [.location: "/verify/aif/landing"])
        }
        router.post("redirect-307") { _, _ -> Response in
            Response(status: .temporaryRedirect, headers: [.location: "/echo"])
        }

        // Answers after `milliseconds` (a real timeout's test); with `?tag=…`, tells
        // ``Arrivals`` as the request arrives.
        router.get("slow/:milliseconds") { request, context -> Response in
            if let tag = request.uri.queryParameters.get("tag") { Arrivals.shared.arrived(String(tag)) }
            let milliseconds = context.parameters.get("milliseconds", as: Int.self) ?? 0
            try await Task.sleep(for: .milliseconds(milliseconds))
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "slow")))
        }

        // `chunks` chunks of 1 KiB, 50 ms apart: a body that keeps moving for a while (a real
        // idle timeout's test).
        router.get("drip/:chunks") { _, context -> Response in
            let chunks = context.parameters.get("chunks", as: Int.self) ?? 1
            return Response(status: .ok, body: ResponseBody { writer in
                for _ in 0..<chunks {
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: "d"), count: 1024))
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await writer.finish(nil)
            })
        }

        // `chunks` chunks of 1 KiB, then a body held open until the client goes: a transfer
        // that only a cancellation ends.
        router.get("held/:chunks") { _, context -> Response in
            let chunks = context.parameters.get("chunks", as: Int.self) ?? 1
            return Response(status: .ok, body: ResponseBody { writer in
                for _ in 0..<chunks {
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: "d"), count: 1024))
                }
                await holdUntilCancelled()
                try await writer.finish(nil)
            })
        }

        // A server-sent event stream in pieces that split lines and events, each written on its
        // own; then (with `?hold=1`) it stays open until the client goes.
        router.get("events") { request, _ -> Response in
            let hold = request.uri.queryParameters.get("hold") == "1"
            return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: ResponseBody { writer in
                for piece in eventStreamPieces {
                    try await writer.write(ByteBuffer(string: piece))
                }
                if hold { await holdUntilCancelled() }
                try await writer.finish(nil)
            })
        }
        router.get("no-content") { _, _ -> Response in
            Response(status: .noContent)
        }

        // A backend that wraps every body: {"code": 0, "message": "ok", "data": …}. 45 goods,
        // paged by `page` and `page_size`; `envelope/expired` is an application error.
        router.get("envelope/goods") { request, _ -> Response in
            let page = max(1, request.uri.queryParameters.get("page", as: Int.self) ?? 1)
            let size = max(1, request.uri.queryParameters.get("page_size", as: Int.self) ?? 20)
            let ids = Array(((page - 1) * size + 1)...(page * size)).filter { $0 <= 45 }
            let items = ids.map { #"{"id": \#($0), "title": "goods \#($0)", "price_cents": \#($0 * 100)}"# }.joined(separator: ", ")
            let data = #"{"items": [\#(items)], "page": \#(page), "page_size": \#(size), "total": 45, "has_more": \#(page * size < 45)}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"code": 0, "message": "ok", "data": \#(data)}"#)))
        }
        router.get("envelope/goods/:id") { _, context -> Response in
            let id = context.parameters.get("id", as: Int.self) ?? 0
            let body = #"{"code": "0", "message": "ok", "data": {"id": \#(id), "title": "goods \#(id)", "price_cents": 250}}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        router.get("envelope/expired") { _, _ -> Response in
            let body = #"{"code": 4001, "message": "coupon expired", "data": null}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }

        router.get("whoami") { _, context -> String in
            "\(context.remotePort)"
        }
        // Answers once `count` requests with the same `?tag=` have come: all of them in flight
        // together.
        router.get("whoami-together/:count") { request, context -> String in
            let tag = String(request.uri.queryParameters.get("tag") ?? "")
            Arrivals.shared.arrived(tag)
            await Arrivals.shared.wait(for: tag, count: context.parameters.get("count", as: Int.self) ?? 1)
            return "\(context.remotePort)"
        }

        router.get("status/:code") { _, context -> Response in
            Response(status: .init(code: context.parameters.get("code", as: Int.self) ?? 500))
        }
        // Reads the body, then answers the status.
        router.put("status/:code") { request, context -> Response in
            _ = try await request.body.collect(upTo: 64 << 20)
            return Response(status: .init(code: context.parameters.get("code", as: Int.self) ?? 500))
        }
        extraRoutes(router)
        return router
    }

    /// 64 MiB where byte `i` is `i % 251`, computed once (the 50 MB tests slice it rather
    /// than compute it on a server thread).
    static let patternBytes: [UInt8] = {
        let count = 64 << 20
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var value: UInt8 = 0
            for index in 0..<count {
                buffer[index] = value
                value = value == 250 ? 0 : value + 1
            }
            initialized = count
        }
    }()

    /// The first `count` bytes of ``patternBytes``.
    static func pattern(count: Int) -> ArraySlice<UInt8> {
        patternBytes[0..<count]
    }
}
