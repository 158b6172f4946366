@_spi(CrossModule) import AIFTransport
import AIFNetworkingTesting
import Foundation
import Hummingbird
import NIOCore

/// A server that reflects each request it gets — its target and its `Authorization` — the way a
/// debug endpoint or an error dump might: each piece as it came, percent-encoded and in base64,
/// at `v1/echo/FORM` as `json`, `text`, `binary` (behind three bytes that are not UTF-8) or
/// `gzip` (the text, with `Content-Encoding: gzip`). It keeps the `sign` values it saw.
final class EchoingServer: Sendable {
    let server: LocalServer
    private let signatures: Locked<[String]>

    init() async throws {
        let signatures = Locked<[String]>([])
        let router = Router()
        router.get("v1/echo/:form") { request, context -> Response in
            var pieces = [request.uri.description, request.headers[.authorization] ?? ""]
            pieces += request.uri.queryParameters.map { String($0.value) }
            if let sign = request.uri.queryParameters.get("sign") { signatures.withLock { $0.append(sign) } }
            let forms = pieces.flatMap { piece in
                [piece, piece.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? piece, Data(piece.utf8).base64EncodedString()]
            }
            let text = forms.joined(separator: "\n")
            let (type, bytes): (String, [UInt8]) = switch context.parameters.get("form") {
            case "json": ("application/json", Array(try JSONEncoder().encode(["echo": forms])))
            case "binary": ("application/octet-stream", [0xFF, 0xFE, 0x00] + Array(text.utf8))
            case "gzip": ("text/plain", Array(try TestServers.gzip(Data(text.utf8))))
            default: ("text/plain", Array(text.utf8))
            }
            var headers: HTTPFields = [.contentType: type]
            if context.parameters.get("form") == "gzip" { headers[.contentEncoding] = "gzip" }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        server = try await LocalServer.start(router: router)
        self.signatures = signatures
    }

    /// The `sign` values of the requests so far.
    var signaturesSeen: [String] { signatures.withLock { $0 } }

    func stop() async {
        await server.stop()
    }
}
