@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

/// One part of a `multipart/form-data` body as a server reads it.
private struct ReceivedPart {
    var headers: [String: String]
    var body: [UInt8]

    var disposition: String { headers["content-disposition"] ?? "" }
}

/// Splits a multipart body at the boundary its `Content-Type` announces (RFC 2046 section 5.1).
private func parts(of body: Data, contentType: String) throws -> [ReceivedPart] {
    let boundary = try #require(contentType.split(separator: ";").lazy.map { $0.trimmingCharacters(in: .whitespaces) }
        .first { $0.hasPrefix("boundary=") }.map { String($0.dropFirst("boundary=".count)) })
    let bytes = [UInt8](body)
    let delimiter = Array("--\(boundary)".utf8)
    var starts: [Int] = []
    var index = 0
    while index + delimiter.count <= bytes.count {
        if bytes[index..<index + delimiter.count].elementsEqual(delimiter), index == 0 || bytes[index - 2..<index].elementsEqual([13, 10]) {
            starts.append(index)
            index += delimiter.count
        } else {
            index += 1
        }
    }
    try #require(starts.count >= 2, "no delimiters in the body")
    let closing = starts.last!
    #expect(Array(bytes[closing + delimiter.count..<min(bytes.count, closing + delimiter.count + 2)]) == Array("--".utf8), "the last delimiter does not close the body")
    return try zip(starts, starts.dropFirst()).map { start, next in
        let content = Array(bytes[(start + delimiter.count + 2)..<(next - 2)])   // after CRLF, before CRLF
        let separator = try #require(content.indices.first { content[$0...].starts(with: [13, 10, 13, 10]) })
        var headers: [String: String] = [:]
        for line in String(decoding: content[..<separator], as: UTF8.self).components(separatedBy: "\r\n") {
            let pieces = line.split(separator: ":", maxSplits: 1)
            headers[pieces[0].lowercased()] = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces) : ""
        }
        return ReceivedPart(headers: headers, body: Array(content[(separator + 4)...]))
    }
}

@Suite("Multipart uploads")
struct MultipartUploadTests {

    private static let transport = CurlTransport(configuration: .init(proxy: .none))

    @Test func fieldsAndFilesArriveAsTheServerReadsThem() async throws {
        let server = try await TestServers.shared().plain
        let folder = try makeTestFolder("upload")
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = Digest.randomBytes(30_000)
        let photoPath = folder.appending(path: "IMG_0042.JPG").path
        try Data(photo).write(to: URL(fileURLWithPath: photoPath))
        var form = HTTPRequest.MultipartForm()
        form.append("caption", "Holiday, day 1")
        form.append("empty", "")
        form.appendFile("photo", at: photoPath)
        form.appendFile("notes", data: Data("a;b\n".utf8), filename: "notes.csv")
        form.parts.append(.init(name: "meta", content: .bytes(Data("{}".utf8)), contentType: "application/json", headers: ["X-Part": "7"]))

        let response = try await Self.transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .multipart(form)))
        #expect(response.statusCode == 200)
        let type = try #require(response.headers["X-Request-Content-Type"])
        #expect(type.hasPrefix("multipart/form-data; boundary="))
        let received = try parts(of: response.body, contentType: type)
        try #require(received.count == 5)
        #expect(received[0].disposition == "form-data; name=\"caption\"")
        #expect(received[0].headers["content-type"] == nil)
        #expect(received[0].body == Array("Holiday, day 1".utf8))
        #expect(received[1].disposition == "form-data; name=\"empty\"" && received[1].body.isEmpty)
        #expect(received[2].disposition == "form-data; name=\"photo\"; filename=\"IMG_0042.JPG\"")
        #expect(received[2].headers["content-type"] == "image/jpeg")
        #expect(received[2].body == photo)
        #expect(received[3].disposition == "form-data; name=\"notes\"; filename=\"notes.csv\"")
        #expect(received[3].headers["content-type"] == "text/csv")
        #expect(received[3].body == Array("a;b\n".utf8))
        #expect(received[4].headers["content-type"] == "application/json")
        #expect(received[4].headers["x-part"] == "7")
        #expect(Int(response.headers["X-Body-Length"] ?? "") == response.body.count)
    }

    @Test func namesAreEncodedAsRFC7578AndBrowsersDo() async throws {
        let server = try await TestServers.shared().plain
        var form = HTTPRequest.MultipartForm()
        form.appendFile("résumé", data: Data("pdf".utf8), filename: "Lebenslauf \"final\"\r\n.PDF")
        let response = try await Self.transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .multipart(form)))
        let received = try parts(of: response.body, contentType: try #require(response.headers["X-Request-Content-Type"]))
        // UTF-8 as it is; the quote and line breaks percent-encoded, never a raw header break.
        #expect(received.first?.disposition == "form-data; name=\"résumé\"; filename=\"Lebenslauf %22final%22%0D%0A.PDF\"")
        #expect(received.first?.headers["content-type"] == "application/pdf")
    }

    @Test func pythonsParserReadsTheSameForm() async throws {
        // A parser nobody here wrote: Python's `email` package, as a server would use it.
        let server = try await TestServers.shared().plain
        let folder = try makeTestFolder("multipart")
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = Data(Digest.randomBytes(20_000))
        let photoPath = folder.appending(path: "Ansicht Zürich.jpeg").path
        try photo.write(to: URL(fileURLWithPath: photoPath))
        var form = HTTPRequest.MultipartForm()
        form.append("title", "Grüße aus Zürich 🇨🇭")
        form.appendFile("photo", at: photoPath)
        form.appendFile("notes", data: Data("première ligne\n".utf8), filename: "notes résumé.txt")
        let response = try await Self.transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .multipart(form)))
        let bodyPath = folder.appending(path: "body").path
        try response.body.write(to: URL(fileURLWithPath: bodyPath))
        let script = """
            import sys, json, hashlib, email, email.policy
            ctype, path = sys.argv[1], sys.argv[2]
            raw = open(path, "rb").read()
            message = email.message_from_bytes(b"Content-Type: " + ctype.encode() + b"\\r\\n\\r\\n" + raw, policy=email.policy.HTTP)
            text = lambda value: None if value is None else str(value).encode("utf-8", "surrogateescape").decode("utf-8")
            parts = []
            for part in message.iter_parts():
                payload = part.get_payload(decode=True) or b""
                parts.append({"name": text(part.get_param("name", header="content-disposition")), "filename": text(part.get_param("filename", header="content-disposition")),
                              "type": part.get("content-type") and part.get_content_type(), "size": len(payload), "sha256": hashlib.sha256(payload).hexdigest()})
            print(json.dumps(parts))
            """
        let run = try await Shell.run("/usr/bin/python3", ["-c", script, try #require(response.headers["X-Request-Content-Type"]), bodyPath])
        #expect(run.status == 0, "\(run.standardError)")
        struct Parsed: Decodable, Equatable {
            var name: String
            var filename: String?
            var type: String?
            var size: Int
            var sha256: String
        }
        let parsed = try JSONDecoder().decode([Parsed].self, from: Data(run.standardOutput.utf8))
        let title = Data("Grüße aus Zürich 🇨🇭".utf8)
        let notes = Data("première ligne\n".utf8)
        #expect(parsed == [
            Parsed(name: "title", filename: nil, type: nil, size: title.count, sha256: Digest.hex(Digest.hash(title))),
            Parsed(name: "photo", filename: "Ansicht Zürich.jpeg", type: "image/jpeg", size: photo.count, sha256: Digest.hex(Digest.hash(photo))),
            Parsed(name: "notes", filename: "notes résumé.txt", type: "text/plain", size: notes.count, sha256: Digest.hex(Digest.hash(notes))),
        ])
    }

    @Test func contentTypesComeFromTheExtension() {
        #expect(HTTPRequest.MultipartForm.contentType(forFileName: "a.PNG") == "image/png")
        #expect(HTTPRequest.MultipartForm.contentType(forFileName: "/x/archive.tar.gz") == "application/gzip")
        #expect(HTTPRequest.MultipartForm.contentType(forFileName: "README") == "application/octet-stream")
        #expect(HTTPRequest.MultipartForm.contentType(forFileName: "dir.d/file") == "application/octet-stream")
        #expect(HTTPRequest.MultipartForm.contentType(forFileName: "x.unknownext") == "application/octet-stream")
    }

    @Test func aMissingFileFailsNamingThePartAndSendsNothing() async throws {
        let server = try RawServer(.keepAlive)
        defer { server.stop() }
        var form = HTTPRequest.MultipartForm()
        form.append("a", "1")
        form.appendFile("photo", at: "/nonexistent/aif/photo.jpg")
        let url = URL(string: "http://127.0.0.1:\(server.port)/upload")!
        let error = await #expect(throws: TransportError.self) {
            try await Self.transport.send(HTTPRequest(method: .post, url: url, body: .multipart(form)))
        }
        #expect(error?.code == .bodySourceFailed)
        #expect(error?.description.contains("multipart part 2 (\"photo\")") == true)
        #expect(error?.description.contains("/nonexistent/aif/photo.jpg") == true)
        #expect(error?.description.contains("No such file") == true)
        #expect(server.acceptedConnections == 0)
    }

    @Test func partsThatWouldChangeSilentlyAreRefused() async throws {
        let url = URL(string: "http://127.0.0.1:1/never")!
        let cases: [(HTTPRequest.MultipartForm.Part, String)] = [
            (.init(name: "a\u{0}b", content: .bytes(Data())), "NUL byte in its name"),
            (.init(name: "a", content: .bytes(Data()), filename: "x\u{0}.txt"), "NUL byte in its file name"),
            (.init(name: "a", content: .bytes(Data()), contentType: "text/plain\r\nX-Injected: 1"), "line break"),
            (.init(name: "a", content: .bytes(Data()), headers: ["X-Bad": "1\r\nX-Injected: 2"]), "header \"X-Bad\""),
        ]
        for (part, problem) in cases {
            let error = await #expect(throws: TransportError.self) {
                try await Self.transport.send(HTTPRequest(method: .post, url: url, body: .multipart(HTTPRequest.MultipartForm([part]))))
            }
            #expect(error?.code == .invalidRequest)
            #expect(error?.description.contains(problem) == true, "\(String(describing: error))")
        }
    }

    @Test func aContentTypeMustBeMultipart() async throws {
        let server = try await TestServers.shared().plain
        var form = HTTPRequest.MultipartForm()
        form.append("a", "1")
        let refused = await #expect(throws: TransportError.self) {
            try await Self.transport.send(HTTPRequest(method: .post, url: server.url("echo"), headers: ["Content-Type": "application/json"], body: .multipart(form)))
        }
        #expect(refused?.code == .invalidRequest)
        #expect(refused?.description.contains("multipart/ Content-Type") == true)
        let mixed = try await Self.transport.send(HTTPRequest(method: .put, url: server.url("echo"), headers: ["Content-Type": "multipart/mixed"], body: .multipart(form)))
        let type = try #require(mixed.headers["X-Request-Content-Type"])
        #expect(type.hasPrefix("multipart/mixed; boundary="))
        #expect(mixed.headers["X-Method"] == "PUT")
        #expect(try parts(of: mixed.body, contentType: type).first?.body == Array("1".utf8))
    }

    @Test func aHandleReusedAfterAFormSendsWhatTheNextRequestSays() async throws {
        // One handle, one connection: a form, then bytes, then a GET, then a form again.
        let server = try await TestServers.shared().plain
        let transport = CurlTransport(configuration: .init(connectionPool: .init(maxConnectionsPerHost: 1), proxy: .none))
        defer { transport.shutdown() }
        var form = HTTPRequest.MultipartForm()
        form.append("a", "1")
        for round in 0..<2 {
            let multipart = try await transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .multipart(form)))
            #expect(multipart.headers["X-Request-Content-Type"]?.hasPrefix("multipart/form-data") == true, "round \(round)")
            let bytes = try await transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .bytes(Data("plain".utf8))))
            #expect(bytes.headers["X-Request-Content-Type"] == nil)
            #expect(bytes.body == Data("plain".utf8))
            let get = try await transport.send(HTTPRequest(url: server.url("echo")))
            #expect(get.headers["X-Method"] == "GET")
            #expect(get.headers["X-Body-Length"] == "0")
        }
    }

    @Test func uploadProgressCountsTheWholeBody() async throws {
        let server = try await TestServers.shared().plain
        var form = HTTPRequest.MultipartForm()
        form.appendFile("blob", data: Data(Digest.randomBytes(1 << 20)), filename: "blob.bin")
        let reports = Locked<[TransferProgress]>([])
        let response = try await Self.transport.send(HTTPRequest(method: .post, url: server.url("digest"), body: .multipart(form))) { progress in
            reports.withLock { $0.append(progress) }
        }
        let answer = String(decoding: response.body, as: UTF8.self).split(separator: " ")
        let length = try #require(Int64(answer.first ?? ""))
        #expect(length > 1 << 20)
        let last = try #require(reports.withLock { $0.last })
        #expect(last.bytesSent == length)
        #expect(last.totalBytesToSend == length)
        let sent = reports.withLock { $0.map(\.bytesSent) }
        #expect(sent == sent.sorted())
    }

    @Test func aTemporaryRedirectSendsTheFormAgain() async throws {
        let server = try await TestServers.shared().plain
        var form = HTTPRequest.MultipartForm()
        form.appendFile("f", data: Data("again".utf8), filename: "a.txt")
        let response = try await Self.transport.send(HTTPRequest(method: .post, url: server.url("redirect-307"), body: .multipart(form)))
        #expect(response.statusCode == 200)
        #expect(response.headers["X-Target"] == "/echo")
        let received = try parts(of: response.body, contentType: try #require(response.headers["X-Request-Content-Type"]))
        #expect(received.first?.body == Array("again".utf8))
    }

    @Test func aLargeFileIsStreamedNotLoaded() async throws {
        // In a process of its own, so that its memory is the upload's alone; to a sink that
        // counts the bytes and keeps none.
        let server = try RawServer(.countBody)
        defer { server.stop() }
        let folder = try makeTestFolder("upload")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "backup.tar").path
        let content = Data(repeating: 0x5A, count: 100 << 20)
        try content.write(to: URL(fileURLWithPath: path))
        let run = try await Shell.run(helperPath, ["upload", "http://127.0.0.1:\(server.port)/upload", path])
        #expect(run.status == 0, "\(run.standardError)")
        let figures = Dictionary(uniqueKeysWithValues: run.standardOutput.split(whereSeparator: \.isWhitespace).compactMap { pair -> (String, String)? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        })
        #expect(figures["status"] == "200")
        let answer = try #require(figures["answer"]).split(separator: ",")
        #expect((Int(answer[0]) ?? 0) > content.count)
        #expect(answer[1].hasPrefix("multipart/form-data;"))
        let growth = try #require(Int(figures["peak-growth-kib"] ?? ""))
        #expect(growth < 8 << 10, "peak resident memory grew by \(growth) KiB for a 100 MiB upload")
    }
}
