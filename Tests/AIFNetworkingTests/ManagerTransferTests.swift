@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

/// Hears a transfer load's progress and outcome.
private final class TransferRecorder: APIManagerDelegate, LoadPlugin {
    /// Each progress report, with its load.
    let progress = Collected<(load: LoadID, progress: TransferProgress)>()
    let outcomes = Collected<String>()
    /// Each load's end, as its plugins hear it (after its delegate, cancelled or not).
    let ends = Collected<LoadID>()

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        outcomes.append("succeeded \(response.statusCode)")
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        outcomes.append("failed: \(error.message)")
    }

    func manager<Content>(_ manager: APIManager<Content>, didReportProgress progress: TransferProgress, loadID: LoadID) {
        self.progress.append((loadID, progress))
    }

    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) {
        ends.append(load.loadID)
    }
}

@Suite("Uploads and downloads as manager loads", .timeLimit(.minutes(2)))
struct ManagerTransferTests {

    /// A shop stack whose online environment is a raw server of `content`, honouring ranges.
    private static func fileServer(_ content: [UInt8], cutFirstAfter cut: Int? = nil) async throws -> (ShopStack, RawServer, RangedResource) {
        let resource = RangedResource(.init(content: content, cutNextAfter: cut))
        let server = try RawServer(.resource(resource))
        let stack = try await ShopStack.make(onlineURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        return (stack, server, resource)
    }

    @Test func aDownloadIsASignedLoadWrittenToAFile() async throws {
        let content = Digest.randomBytes(1 << 20)
        let (stack, server, _) = try await Self.fileServer(content)
        defer { server.stop() }
        let folder = try makeTestFolder("manager-transfer")
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = stack.manager("files/{name}", NoContent.self)
        let reports = Locked<[TransferProgress]>([])
        let file = try await manager.download(
            ["name": "catalogue.bin"], to: FileDownload(to: folder.appending(path: "catalogue.bin"), expectedSHA256: Digest.hex(Digest.hash(content)))
        ) { progress in reports.withLock { $0.append(progress) } }
        #expect(try Data(contentsOf: file.url) == Data(content))
        #expect(file.byteCount == Int64(content.count))
        #expect(file.sha256 == Digest.hex(Digest.hash(content)))
        #expect(file.response.statusCode == 200)
        let last = try #require(reports.withLock { $0.last })
        #expect(last.bytesReceived == Int64(content.count))
        #expect(last.totalBytesToReceive == Int64(content.count))
        #expect(reports.withLock { $0.count } <= 40)   // throttled: not one per buffer
        #expect(stack.proxy.loadsInFlight.isEmpty)
    }

    @Test func aRetriedDownloadResumesWithARangeItSigned() async throws {
        let content = Digest.randomBytes(512 << 10)
        let (stack, server, resource) = try await Self.fileServer(content, cutFirstAfter: 200_000)
        defer { server.stop() }
        let folder = try makeTestFolder("manager-transfer")
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = stack.manager("files/{name}", NoContent.self) { var settings = $0; settings.retryPolicy = RetryPolicy(baseDelay: .milliseconds(10)); return settings }
        let file = try await manager.download(["name": "big.bin"], to: FileDownload(to: folder.appending(path: "big.bin")))
        #expect(try Data(contentsOf: file.url) == Data(content))
        #expect(file.resumedAt == 200_000)
        #expect(resource.receivedRanges == ["-", "bytes=200000-"])
        // Both attempts were signed, each with its own nonce.
        let lines = server.requestLines
        #expect(lines.count == 2 && lines.allSatisfy { $0.contains("sign=") && $0.contains("/v1/files/big.bin?") })
        #expect(Set(lines).count == 2)
    }

    @Test func aLaterLoadResumesWhatAFailedOneLeft() async throws {
        let content = Digest.randomBytes(300_000)
        let (stack, server, resource) = try await Self.fileServer(content, cutFirstAfter: 100_000)
        defer { server.stop() }
        let folder = try makeTestFolder("manager-transfer")
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = stack.manager("files/{name}", NoContent.self) { var settings = $0; settings.retryPolicy = RetryPolicy(maxRetries: 0); return settings }
        let target = FileDownload(to: folder.appending(path: "a.bin"))
        let error = await #expect(throws: APIError.self) { try await manager.download(["name": "a.bin"], to: target) }
        #expect(error?.kind == .transport)
        #expect(FileManager.default.fileExists(atPath: target.partialFile.path))
        #expect(!FileManager.default.fileExists(atPath: target.destination.path))
        // Another manager, same endpoint and parameters: the record names the load, not the signed URL.
        let again = stack.manager("files/{name}", NoContent.self)
        let file = try await again.download(["name": "a.bin"], to: target)
        #expect(file.resumedAt == 100_000)
        #expect(try Data(contentsOf: file.url) == Data(content))
        #expect(resource.receivedRanges.last == "bytes=100000-")
        // Other parameters do not resume that file.
        _ = try await again.download(["name": "b.bin"], to: FileDownload(to: folder.appending(path: "b.bin")))
        #expect(resource.receivedRanges.last == "-")
    }

    @Test func aStatusThatBringsNoFileFailsAsALoadAndKeepsNothing() async throws {
        let stack = try await ShopStack.make()
        let folder = try makeTestFolder("manager-transfer")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = FileDownload(to: folder.appending(path: "missing.bin"))
        let error = await #expect(throws: APIError.self) {
            try await stack.manager("goods/{id}", NoContent.self).download(["id": 999_999], to: target)
        }
        #expect(error?.kind == .httpStatus || error?.kind == .serviceVeto)
        #expect(error?.statusCode == 404)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func theDelegateFaceHearsProgressThenTheOutcomeAndCancellationKeepsThePartialFile() async throws {
        let content = Digest.randomBytes(2 << 20)
        let (stack, server, _) = try await Self.fileServer(content)
        defer { server.stop() }
        let folder = try makeTestFolder("manager-transfer")
        defer { try? FileManager.default.removeItem(at: folder) }
        let recorder = TransferRecorder()
        let manager = stack.manager("files/{name}", NoContent.self)
        manager.delegate = recorder
        manager.plugins.append(recorder)
        manager.callbackExecutor = .immediate
        manager.downloadData(with: ["name": "x"], to: FileDownload(to: folder.appending(path: "x.bin")))
        _ = await recorder.ends.wait(count: 1)
        #expect(recorder.outcomes.values == ["succeeded 200"])
        #expect(recorder.progress.values.last?.progress.bytesReceived == Int64(content.count))

        // Paced, then cancelled mid-way, once some of it has come: nobody is told, the partial
        // file stays for a resume.
        let control = TransferControl(maxBytesPerSecond: 512 << 10)
        let target = FileDownload(to: folder.appending(path: "y.bin"))
        let reported = recorder.progress.values.count
        let id = manager.downloadData(with: ["name": "y"], to: target, control: control)
        var arrived: Int64 = 0
        for count in (reported + 1)...(reported + 10_000) {
            guard let last = await recorder.progress.wait(count: count).last, last.load == id else { break }
            arrived = last.progress.bytesReceived
            if arrived > 0 { break }
        }
        #expect(arrived > 0 && arrived < Int64(content.count))
        stack.proxy.cancel(id)
        #expect(await recorder.ends.wait(count: 2) == [recorder.ends.values[0], id])
        #expect(recorder.outcomes.values == ["succeeded 200"])
        let kept = try FileManager.default.attributesOfItem(atPath: target.partialFile.path)[.size] as? Int ?? 0
        #expect(kept > 0 && kept < content.count)
    }

    @Test func aFileUploadIsSignedOverItsDigestAndAcceptedByTheShop() async throws {
        let stack = try await ShopStack.make()
        let folder = try makeTestFolder("manager-transfer")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "order.json").path
        let body = Data(#"{"goods_id": 3, "quantity": 2}"#.utf8)
        try body.write(to: URL(fileURLWithPath: path))
        let manager = stack.manager("orders", Order.self, method: .post) { var settings = $0; settings.headers = ["Content-Type": "application/json"]; return settings }
        let reports = Locked<[TransferProgress]>([])
        let order = try await manager.load(sending: .file(path: path)) { progress in reports.withLock { $0.append(progress) } }
        #expect(order.statusCode == 201)
        #expect(order.content.goodsId == 3 && order.content.quantity == 2)
        let size = Int64(body.count)
        #expect(reports.withLock { $0.contains { $0.bytesSent == size && $0.totalBytesToSend == size } }, "\(reports.withLock { $0 })")
        _ = try await stack.manager("orders/{id}", NoContent.self, method: .delete).load(["id": .integer(order.content.id)])
    }

    /// A missing file is one mistake: the same error whether the service signs the body
    /// (reading the file) or not, and nothing is sent.
    @Test func aMissingUploadFileIsAConfigurationErrorSignedOrNot() async throws {
        let stack = try await ShopStack.make()
        let servers = try await TestServers.shared()
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(PlainService(baseURL: servers.plain.baseURL()))
        let transport = CountingTransport(CurlTransport.shared)
        let unsigned = APIManager(Endpoint<NoContent>(service: "plain", path: "status/200", method: .put), proxy: APIProxy(transport: transport), registry: registry)
        let missing = "/nonexistent/aif-upload-\(UUID().uuidString).json"
        var form = HTTPRequest.MultipartForm()
        form.append("note", "hello")
        form.appendFile("photo", at: missing)
        for body: HTTPRequest.Body in [.file(path: missing), .multipart(form)] {
            let signedError = await #expect(throws: APIError.self) {
                try await stack.manager("orders", Order.self, method: .post).load(sending: body)
            }
            let unsignedError = await #expect(throws: APIError.self) { try await unsigned.load(sending: body) }
            for error in [signedError, unsignedError] {
                #expect(error?.kind == .configuration, "\(String(describing: error))")
                #expect(error?.message.contains("cannot open") == true && error?.message.contains(missing) == true, "\(String(describing: error))")
                #expect(error?.message.contains("No such file or directory") == true)
            }
            if case .multipart = body { #expect(unsignedError?.message.contains("multipart part 2 (\"photo\")") == true) }
        }
        #expect(stack.transport.sent == 0)
        #expect(transport.sent == 0)
    }

    @Test func aFormToASchemeThatHashesTheBodyFailsAsAConfigurationError() async throws {
        let stack = try await ShopStack.make()
        var form = HTTPRequest.MultipartForm()
        form.append("goods_id", "3")
        let error = await #expect(throws: APIError.self) {
            try await stack.manager("orders", Order.self, method: .post).load(sending: .multipart(form))
        }
        #expect(error?.kind == .configuration)
        #expect(error?.message.contains("multipart/form-data body cannot be signed") == true)
        #expect(stack.transport.sent == 0)
    }

    @Test func theShopsExportIsCutAndResumedWithASignedRange() async throws {
        // The demo shop checks every attempt's signature, the resumed one's included.
        let faults = ShopFaults()
        faults.cutNextExport(after: 500_000)
        let stack = try await ShopStack.make(faults: faults)
        let folder = try makeTestFolder("manager-transfer")
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = stack.manager("exports/{name}", NoContent.self) { var settings = $0; settings.retryPolicy = RetryPolicy(baseDelay: .milliseconds(10)); return settings }
        let file = try await manager.download(["name": "catalogue.csv"], to: FileDownload(to: folder.appending(path: "catalogue.csv")))
        #expect(file.resumedAt == 500_000)
        #expect(file.response.statusCode == 206)
        let bytes = try Data(contentsOf: file.url)
        #expect(bytes.prefix(23) == Data("id,title,price_cents\n1,".utf8))
        #expect(Int64(bytes.count) == file.byteCount)
        #expect(bytes.last == UInt8(ascii: "\n"))
        #expect(stack.transport.sent == 2)
    }
}
