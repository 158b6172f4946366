public import Foundation

/// A download to a file: where it goes, whether it resumes, how it is checked.
///
/// The body is streamed to a partial file beside the destination (`.NAME.aifpart`), so memory
/// stays flat whatever the size; when complete (and its SHA-256 matches, if one is given) it
/// is moved into place in one `rename`, so the destination is never half-written. A download
/// that fails keeps its partial file and a small record of what it was (`.NAME.aifpart.json`:
/// the URL, the `ETag` or `Last-Modified`, the total size), so a later download to the same
/// destination — in this process or another — asks only for the rest, with `Range` and
/// `If-Range`.
public struct FileDownload: Sendable, Hashable {
    /// Where the file goes.
    public var destination: URL
    /// The file's SHA-256 as lowercase hexadecimal, checked before the file is moved into
    /// place; `nil` checks nothing.
    public var expectedSHA256: String?
    /// Whether a failed download keeps its partial file for a later one to resume (`true`),
    /// or removes it.
    public var keepsPartialFile: Bool

    /// Describes a download.
    ///
    /// - Parameters:
    ///   - destination: Where the file goes; its folder must exist.
    ///   - expectedSHA256: The file's SHA-256 in hexadecimal, to check; none by default.
    ///   - keepsPartialFile: Whether a failure keeps what arrived for a later resume; yes by
    ///     default.
    public init(to destination: URL, expectedSHA256: String? = nil, keepsPartialFile: Bool = true) {
        self.destination = destination
        self.expectedSHA256 = expectedSHA256?.lowercased()
        self.keepsPartialFile = keepsPartialFile
    }

    /// The partial file beside the destination.
    public var partialFile: URL {
        destination.deletingLastPathComponent().appending(path: ".\(destination.lastPathComponent).aifpart")
    }

    /// The record of the partial file's origin, beside it.
    var resumeRecordFile: URL {
        destination.deletingLastPathComponent().appending(path: ".\(destination.lastPathComponent).aifpart.json")
    }
}

extension FileDownload {
    /// A finished download.
    public struct File: Sendable {
        /// Where the file is.
        public var url: URL
        /// Its size in bytes.
        public var byteCount: Int64
        /// How many of them an earlier attempt had fetched (0 when it started afresh).
        public var resumedAt: Int64
        /// Its SHA-256 in lowercase hexadecimal, when ``FileDownload/expectedSHA256`` asked for
        /// the check (it matched).
        public var sha256: String?
        /// The last response (its body is empty: it went to the file).
        public var response: HTTPResponse
    }
}
