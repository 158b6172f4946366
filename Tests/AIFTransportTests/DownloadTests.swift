@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

/// Downloads to a file against a raw server that serves one file, honours ranges (or not, as
/// told), changes the file between requests and cuts a body short when asked.
@Suite("Downloads: streamed to a file, resumed, checked, moved into place")
struct DownloadTests {
    /// `count` bytes that differ from one test to the next (made in C: a byte-by-byte Swift
    /// loop under the thread sanitizer would hold a thread of the test pool for seconds).
    static func content(_ count: Int) -> [UInt8] {
        Digest.randomBytes(count)
    }

    static func folder() throws -> URL {
        try makeTestFolder("download")
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        Digest.hex(Digest.hash(bytes))
    }

    func serve(_ content: [UInt8], _ change: (inout RangedResource.Settings) -> Void = { _ in }) throws -> (RawServer, RangedResource, HTTPRequest) {
        var settings = RangedResource.Settings(content: content)
        change(&settings)
        let resource = RangedResource(settings)
        let server = try RawServer(.resource(resource))
        return (server, resource, HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/file.bin")!))
    }

    @Test func aFileArrivesWholeAndNothingIsLeftBeside() async throws {
        let content = Self.content(1 << 20)
        let (server, _, request) = try serve(content)
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let download = FileDownload(to: folder.appending(path: "file.bin"), expectedSHA256: Self.sha256(content))
        let file = try await CurlTransport.shared.download(request, to: download)
        #expect(file.byteCount == Int64(content.count))
        #expect(file.resumedAt == 0)
        #expect(file.sha256 == Self.sha256(content))
        #expect(file.response.body.isEmpty)
        #expect(try Data(contentsOf: file.url) == Data(content))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["file.bin"])
    }

    @Test func aCutDownloadResumesInAnotherTransportWithTheRestOnly() async throws {
        let content = Self.content(1 << 20)
        let (server, resource, request) = try serve(content) { $0.cutNextAfter = 300_000 }
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let download = FileDownload(to: folder.appending(path: "file.bin"), expectedSHA256: Self.sha256(content))
        let first = CurlTransport()
        let error = await #expect(throws: FileDownload.Failure.self) { try await first.download(request, to: download) }
        first.shutdown()
        guard case .transport(let transportError)? = error?.reason else { Issue.record("not a transport failure: \(String(describing: error))"); return }
        #expect(transportError.code == .connectionDropped)
        #expect(error?.partialBytes == 300_000)
        #expect(!FileManager.default.fileExists(atPath: download.destination.path))
        #expect(error?.description.contains("300000 bytes kept for resuming") == true)

        let second = CurlTransport()
        defer { second.shutdown() }
        let progress = Locked<[Int64]>([])
        let file = try await second.download(request, to: download) { report in progress.withLock { $0.append(report.bytesReceived) } }
        #expect(file.resumedAt == 300_000)
        #expect(file.byteCount == Int64(content.count))
        #expect(try Data(contentsOf: file.url) == Data(content))
        #expect(resource.receivedRanges == ["-", "bytes=300000-"])
        // Progress counts the whole file, the kept bytes included.
        #expect(progress.withLock { $0.last } == Int64(content.count))
        #expect(progress.withLock { $0.allSatisfy { $0 >= 300_000 } })
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["file.bin"])
    }

    @Test func aChangedResourceStartsOverCleanly() async throws {
        let old = Self.content(200_000)
        let new = Self.content(150_000)
        let (server, resource, request) = try serve(old) { $0.cutNextAfter = 100_000 }
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let download = FileDownload(to: folder.appending(path: "file.bin"))
        _ = await #expect(throws: FileDownload.Failure.self) { try await CurlTransport.shared.download(request, to: download) }
        resource.change {
            $0.content = new
            $0.entityTag = "\"v2\""
        }
        // `If-Range: "v1"` no longer matches: the server sends all of the new version.
        let file = try await CurlTransport.shared.download(request, to: download)
        #expect(file.resumedAt == 0)
        #expect(try Data(contentsOf: file.url) == Data(new))
        #expect(resource.receivedRanges == ["-", "bytes=100000-"])
    }

    @Test func aServerWithoutRangesSendsItAllAgain() async throws {
        let content = Self.content(200_000)
        let (server, resource, request) = try serve(content) {
            $0.cutNextAfter = 50_000
            $0.supportsRanges = false
            $0.entityTag = nil
            $0.lastModified = "Mon, 23 Nov 2026 10:00:00 GMT"
        }
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let download = FileDownload(to: folder.appending(path: "file.bin"), expectedSHA256: Self.sha256(content))
        _ = await #expect(throws: FileDownload.Failure.self) { try await CurlTransport.shared.download(request, to: download) }
        let file = try await CurlTransport.shared.download(request, to: download)
        #expect(file.resumedAt == 0)
        #expect(file.sha256 == Self.sha256(content))
        #expect(try Data(contentsOf: file.url) == Data(content))
        // Last-Modified served as the validator when there is no ETag.
        #expect(resource.receivedRanges == ["-", "bytes=50000-"])
    }

    @Test func aPartialFileThatIsCompleteEndsWith416AsSuccess() async throws {
        let content = Self.content(70_000)
        let (server, _, request) = try serve(content)
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let download = FileDownload(to: folder.appending(path: "file.bin"), expectedSHA256: Self.sha256(content))
        // As a process killed after the last byte, before the move, leaves it.
        try Data(content).write(to: download.partialFile)
        try ResumeRecord(url: request.url.absoluteString, headers: ["ETag": "\"v1\""], totalBytes: Int64(content.count)).write(to: download.resumeRecordFile)
        let file = try await CurlTransport.shared.download(request, to: download)
        #expect(file.response.statusCode == 416)
        #expect(file.resumedAt == Int64(content.count))
        #expect(file.sha256 == Self.sha256(content))
        #expect(try Data(contentsOf: file.url) == Data(content))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["file.bin"])
    }

    @Test func aPartialFileLongerThanTheResourceStartsOverOnce() async throws {
        let content = Self.content(70_000)
        let (server, resource, request) = try serve(content)
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let download = FileDownload(to: folder.appending(path: "file.bin"))
        try Data(Self.content(90_000)).write(to: download.partialFile)
        try ResumeRecord(url: request.url.absoluteString, headers: ["ETag": "\"v1\""], totalBytes: 90_000).write(to: download.resumeRecordFile)
        let file = try await CurlTransport.shared.download(request, to: download)
        #expect(file.response.statusCode == 200)
        #expect(try Data(contentsOf: file.url) == Data(content))
        #expect(resource.receivedRanges == ["bytes=90000-", "-"])
    }

    @Test func anErrorStatusBringsNoFile() async throws {
        let body = #"{"code":4040,"message":"no such file"}"#
        let server = try RawServer(.reply("HTTP/1.1 404 Not Found\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"))
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let download = FileDownload(to: folder.appending(path: "file.bin"))
        let error = await #expect(throws: FileDownload.Failure.self) {
            try await CurlTransport.shared.download(HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/missing")!), to: download)
        }
        guard case .httpStatus(let response)? = error?.reason else { Issue.record("not an HTTP status: \(String(describing: error))"); return }
        #expect(response.statusCode == 404)
        #expect(String(decoding: response.body, as: UTF8.self) == body)
        #expect(error?.description.contains("the server answered 404") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func aWrongChecksumRemovesTheFile() async throws {
        let content = Self.content(10_000)
        let (server, _, request) = try serve(content)
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wrong = String(repeating: "0", count: 64)
        let error = await #expect(throws: FileDownload.Failure.self) {
            try await CurlTransport.shared.download(request, to: FileDownload(to: folder.appending(path: "file.bin"), expectedSHA256: wrong))
        }
        guard case .integrity(let expected, let actual)? = error?.reason else { Issue.record("not an integrity failure: \(String(describing: error))"); return }
        #expect(expected == wrong)
        #expect(actual == Self.sha256(content))
        #expect(error?.partialBytes == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func anUnwritableDestinationIsNamed() async throws {
        let (server, resource, request) = try serve(Self.content(1000))
        defer { server.stop() }
        let missing = FileManager.default.temporaryDirectory.appending(path: "aif-no-such-folder-\(UUID().uuidString)")
        let error = await #expect(throws: FileDownload.Failure.self) {
            try await CurlTransport.shared.download(request, to: FileDownload(to: missing.appending(path: "file.bin")))
        }
        guard case .file(let problem)? = error?.reason else { Issue.record("not a file failure: \(String(describing: error))"); return }
        #expect(problem.contains(missing.path))
        #expect(problem.contains("No such file or directory"))
        #expect(resource.receivedRanges.isEmpty)   // nothing was sent
    }

    @Test func cancellingMidBodyEndsTheDownload() async throws {
        let server = try RawServer(.stallMidBody(promised: 1 << 20, sent: 1000))
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let received = AsyncStream.makeStream(of: Void.self)
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/stall")!)
        let task = Task {
            try await CurlTransport.shared.download(request, to: FileDownload(to: folder.appending(path: "file.bin"))) { report in
                if report.bytesReceived > 0 { received.continuation.yield() }
            }
        }
        for await _ in received.stream { break }
        task.cancel()
        let result = await task.result
        guard case .failure(let error as FileDownload.Failure) = result, case .transport(let transportError) = error.reason else {
            Issue.record("not a cancelled download: \(result)")
            return
        }
        #expect(transportError.code == .cancelled)
        // No validator came with the body, so nothing could resume it: removed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func memoryStaysFlatWhateverTheSize() async throws {
        // In a process of its own, so that its memory is the download's alone.
        let content = [UInt8](repeating: 0x61, count: 64 << 20)
        let (server, _, request) = try serve(content)
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try await Shell.run(helperPath, ["download", request.url.absoluteString, folder.appending(path: "file.bin").path])
        #expect(run.status == 0, "\(run.standardError)")
        let figures = Dictionary(uniqueKeysWithValues: run.standardOutput.split(whereSeparator: \.isWhitespace).compactMap { pair -> (String, Int)? in
            let parts = pair.split(separator: "=")
            return parts.count == 2 ? (String(parts[0]), Int(parts[1]) ?? -1) : nil
        })
        #expect(figures["bytes"] == content.count)
        let growth = try #require(figures["peak-growth-kib"])
        #expect(growth < 8 << 10, "peak resident memory grew by \(growth) KiB for a 64 MiB download")
    }

    @Test func aFullDiskFailsTheDownloadAndNeverWritesTheDestination() async throws {
        // A 1 MiB file system of its own (a tmpfs in a mount namespace the test makes, gone
        // with the process; inside a user namespace, so that no privilege is needed), and a
        // 4 MiB file.
        let content = Self.content(4 << 20)
        let (server, _, request) = try serve(content)
        defer { server.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = "mount -t tmpfs -o size=1m aif-full \"$1\" && exec \"$2\" download \"$3\" \"$1/file.bin\""
        let run = try await Shell.run("/usr/bin/unshare", ["--user", "--map-root-user", "--mount", "sh", "-c", script, "sh", folder.path, helperPath, request.url.absoluteString])
        #expect(run.status == 1, "\(run.standardOutput) \(run.standardError)")
        #expect(run.standardOutput.contains("No space left on device"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("destination-exists=false"))
        // The bytes that fitted are kept for a resume (the server sent an ETag).
        let kept = run.standardOutput.split(separator: " ").first { $0.hasPrefix("partial-file-bytes=") }.flatMap { Int($0.dropFirst("partial-file-bytes=".count)) }
        #expect((kept ?? 0) > 0 && (kept ?? 0) <= 1 << 20, "\(run.standardOutput)")
        #expect(run.standardOutput.contains("partial-bytes=\(kept ?? -1) "), "the error counts what the file holds")
    }
}
