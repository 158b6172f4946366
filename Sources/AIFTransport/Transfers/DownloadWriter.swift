import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes a download's body to its partial file as it arrives: appends to what an earlier
/// attempt left when the server sends the rest (206), starts over when it sends the whole
/// (200), and leaves any other answer in memory.
///
/// - Note: `@unchecked Sendable`: during the transfer only the transport's thread calls it
///   (``willReceiveBody(statusCode:headers:)`` and ``receive(_:)``, one at a time); the
///   downloading task reads it before the request is sent and after the transfer completed,
///   which the transport orders after its last call.
package final class DownloadWriter: HTTPRequest.BodyReceiver, @unchecked Sendable {
    let download: FileDownload
    let url: String
    /// The record of the partial file, if it can be resumed from.
    private(set) var record: ResumeRecord?
    /// The bytes in the partial file.
    private(set) var byteCount: Int64
    /// Where the response being written started (the bytes a resumed download kept).
    private(set) var resumedAt: Int64 = 0
    /// The bytes the partial file held when the writer opened it.
    let keptAtStart: Int64
    /// Whether a response body came here (a file with no body never calls the writer).
    private(set) var tookBody = false
    /// The status of the response whose body came here.
    private(set) var statusCode = 0
    /// The size of the whole file, when the server said.
    private(set) var totalBytes: Int64?
    private var descriptor: Int32
    private var hash: StreamingHash?

    /// Opens (or creates) the partial file; reads its record, and hashes what it holds when a
    /// SHA-256 is to be checked.
    package init(_ download: FileDownload, url: String) throws(FileDownload.Failure) {
        self.download = download
        self.url = url
        let path = download.partialFile.path
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw FileDownload.Failure(reason: .file("cannot open \(path): \(String(cString: strerror(errno)))"), destination: download.destination, partialBytes: 0)
        }
        let end = lseek(descriptor, 0, SEEK_END)
        byteCount = Int64(max(end, 0))
        keptAtStart = byteCount
        if let record = ResumeRecord.read(from: download.resumeRecordFile), record.url == url, record.ifRange != nil, byteCount > 0 {
            self.record = record
        }
        if download.expectedSHA256 != nil {
            hash = StreamingHash(.sha256)
            if record != nil { try hashPartialFile() }
        }
    }

    deinit {
        closeFile()
    }

    /// Where the progress of the response under way starts: the bytes kept, while a resume
    /// is asked for and no body has come yet, then where the body that came starts.
    var progressOffset: Int64 {
        tookBody ? resumedAt : (record != nil ? byteCount : 0)
    }

    /// A transfer's progress as the whole file's: the bytes an earlier attempt kept counted.
    package func wholeFile(_ progress: TransferProgress) -> TransferProgress {
        var whole = progress
        let offset = progressOffset
        whole.bytesReceived += offset
        whole.totalBytesToReceive = whole.totalBytesToReceive.map { $0 + offset }
        return whole
    }

    /// The headers that ask for the rest of the file, when it can be resumed.
    package var resumeHeaders: [(String, String)] {
        guard let record, let validator = record.ifRange else { return [] }
        return [("Range", "bytes=\(byteCount)-"), ("If-Range", validator)]
    }

    // MARK: HTTPRequest.BodyReceiver

    package func willReceiveBody(statusCode: Int, headers: HTTPHeaders) throws -> Bool {
        switch statusCode {
        case 206:
            guard let range = ContentRange(headers["Content-Range"]) else {
                throw DownloadFailure("the server's 206 answer has no usable Content-Range (\(headers["Content-Range"] ?? "none"))")
            }
            guard range.first == byteCount else {
                throw DownloadFailure("the server sent bytes from \(range.first), but the partial file holds \(byteCount)")
            }
            resumedAt = byteCount
            totalBytes = range.total ?? record?.totalBytes
            if let total = range.total, record?.totalBytes != total {
                record?.totalBytes = total
                try record?.write(to: download.resumeRecordFile)
            }
        case 200..<300:
            try startOver()
            totalBytes = headers["Content-Length"].flatMap { Int64($0) }
            // Resumable later only with a validator to ask for the same version.
            let fresh = ResumeRecord(url: url, headers: headers, totalBytes: totalBytes)
            record = fresh.ifRange != nil ? fresh : nil
            if let record {
                try record.write(to: download.resumeRecordFile)
            } else {
                try? FileManager.default.removeItem(at: download.resumeRecordFile)
            }
        default:
            return false
        }
        self.statusCode = statusCode
        tookBody = true
        return true
    }

    package func receive(_ bytes: UnsafeRawBufferPointer) throws {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = write(descriptor, base, left)
            if written < 0 {
                if errno == EINTR { continue }
                throw DownloadFailure("writing \(download.partialFile.path) failed: \(String(cString: strerror(errno)))")
            }
            base += written
            left -= written
            // Counted as written, so that a failure part-way reports what the file holds.
            byteCount += Int64(written)
        }
        hash?.update(bytes)
    }

    // MARK: Steps of the download

    /// What an answer means for the download.
    package enum Verdict {
        /// The file is complete, checked and in place.
        case finished(FileDownload.File)
        /// A 416 for a partial file that is not the whole: it was emptied; ask again without a
        /// range.
        case startOver
        /// A status that brings no file: the caller decides (fail, or try again later).
        case notTheFile
    }

    /// Judges the answer to the attempt this writer served: completes the file (a 2xx whose
    /// size is right, or a 416 for a partial file that already holds the whole), empties it for
    /// a 416 otherwise, or leaves it for any other status.
    ///
    /// - Throws: ``FileDownload/Failure`` for a 2xx that does not make the file (a 206 without a body,
    ///   a size other than announced, a checksum mismatch, a file system failure).
    package func verdict(on response: HTTPResponse) throws(FileDownload.Failure) -> Verdict {
        switch response.statusCode {
        case 200..<300:
            if !tookBody {
                // No body came: a 200 means an empty file; a 206 must carry its range.
                guard response.statusCode != 206 else { throw failure(.invalidResponse("the server's 206 answer has no body")) }
                do { try startOver() } catch { throw failure(.file(error.description)) }
            }
            if let totalBytes, byteCount != totalBytes {
                throw failure(.invalidResponse("the file has \(byteCount) of the \(totalBytes) bytes the server announced"))
            }
            return .finished(try finish(response))
        case 416 where keptAtStart > 0:
            let total = ContentRange.unsatisfiedTotal(response.headers["Content-Range"]) ?? record?.totalBytes
            if total == keptAtStart, record != nil {
                return .finished(try finish(response))
            }
            do { try discardPartial() } catch { throw failure(.file(error.description)) }
            closeFile()
            return .startOver
        default:
            return .notTheFile
        }
    }

    private func finish(_ response: HTTPResponse) throws(FileDownload.Failure) -> FileDownload.File {
        let count = byteCount
        let resumed = tookBody ? resumedAt : count
        let sha256 = try complete()
        return FileDownload.File(url: download.destination, byteCount: count, resumedAt: resumed, sha256: sha256, response: response)
    }

    /// Empties the partial file: the server sends the whole file (or an empty one).
    func startOver() throws(DownloadFailure) {
        guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw DownloadFailure("emptying \(download.partialFile.path) failed: \(String(cString: strerror(errno)))")
        }
        byteCount = 0
        resumedAt = 0
        if hash != nil { hash = StreamingHash(.sha256) }
    }

    /// Forgets the partial file and its record, and empties it: it cannot be resumed.
    func discardPartial() throws(DownloadFailure) {
        try startOver()
        record = nil
        try? FileManager.default.removeItem(at: download.resumeRecordFile)
    }

    /// Flushes the file to disk, checks its SHA-256 if asked, and moves it into place.
    /// Returns the SHA-256 when it was computed.
    func complete() throws(FileDownload.Failure) -> String? {
        guard fsync(descriptor) == 0 else { throw failure(.file("flushing \(download.partialFile.path) failed: \(String(cString: strerror(errno)))")) }
        closeFile()
        var digest: String?
        if let expected = download.expectedSHA256, let finished = hash.take() {
            let actual = Digest.hex(finished.finish())
            guard actual == expected else {
                removePartial()
                throw FileDownload.Failure(reason: .integrity(expected: expected, actual: actual), destination: download.destination, partialBytes: 0)
            }
            digest = actual
        }
        guard rename(download.partialFile.path, download.destination.path) == 0 else {
            throw failure(.file("moving \(download.partialFile.path) to \(download.destination.path) failed: \(String(cString: strerror(errno)))"))
        }
        try? FileManager.default.removeItem(at: download.resumeRecordFile)
        return digest
    }

    /// The download's error for `reason`: the partial file kept, or removed as the download
    /// asks.
    package func failure(_ reason: FileDownload.Failure.Reason) -> FileDownload.Failure {
        closeFile()
        if !download.keepsPartialFile || byteCount == 0 || record == nil { removePartial() }
        return FileDownload.Failure(reason: reason, destination: download.destination, partialBytes: byteCount)
    }

    /// Closes the partial file.
    package func closeFile() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    private func removePartial() {
        try? FileManager.default.removeItem(at: download.partialFile)
        try? FileManager.default.removeItem(at: download.resumeRecordFile)
        byteCount = 0
    }

    /// Feeds what the partial file holds to the hash, for a download that appends to it.
    private func hashPartialFile() throws(FileDownload.Failure) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0 {
                throw FileDownload.Failure(
                    reason: .file("reading \(download.partialFile.path) failed: \(String(cString: strerror(errno)))"),
                    destination: download.destination, partialBytes: byteCount)
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hash?.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            offset += off_t(count)
        }
    }
}

/// Why the writer refused a body; the transfer fails with its text.
struct DownloadFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// `Content-Range: bytes 100-199/1000` (or `/*`).
struct ContentRange: Equatable {
    var first: Int64
    var last: Int64
    var total: Int64?

    init?(_ text: String?) {
        guard let text, text.hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst("bytes ".count).split(separator: "/", maxSplits: 1)
        let bounds = parts.first?.split(separator: "-", maxSplits: 1) ?? []
        guard parts.count == 2, bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last else { return nil }
        self.first = first
        self.last = last
        if parts[1] == "*" {
            total = nil
        } else {
            guard let total = Int64(parts[1]), total > last else { return nil }
            self.total = total
        }
    }

    /// The total of an unsatisfied range's `bytes */1000`.
    static func unsatisfiedTotal(_ text: String?) -> Int64? {
        guard let text, text.hasPrefix("bytes */") else { return nil }
        return Int64(text.dropFirst("bytes */".count))
    }
}
