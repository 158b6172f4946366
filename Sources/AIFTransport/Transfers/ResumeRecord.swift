import Foundation

/// What a partial file was downloaded from, kept beside it (``FileDownload``'s record file) so
/// that a later download — in another process too — can ask for the rest of the same version.
struct ResumeRecord: Codable, Sendable, Hashable {
    /// The URL the bytes came from.
    var url: String
    /// The response's strong `ETag`, if it had one.
    var entityTag: String?
    /// The response's `Last-Modified`, if it had one.
    var lastModified: String?
    /// The full size, if the server said.
    var totalBytes: Int64?

    /// The `If-Range` value that makes a server send the rest only of this version: the strong
    /// `ETag`, else `Last-Modified` (RFC 9110 §13.1.5); `nil` when neither was given, and the
    /// download cannot resume safely.
    var ifRange: String? {
        entityTag ?? lastModified
    }

    /// The record of a response that starts (or restarts) a file.
    init(url: String, headers: HTTPHeaders, totalBytes: Int64?) {
        self.url = url
        // A weak validator (`W/"…"`) must not be used in If-Range.
        entityTag = headers["ETag"].flatMap { $0.hasPrefix("W/") ? nil : $0 }
        lastModified = headers["Last-Modified"]
        self.totalBytes = totalBytes
    }

    /// The record at `file`, or `nil` when there is none or it cannot be read.
    static func read(from file: URL) -> ResumeRecord? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        return try? JSONDecoder().decode(ResumeRecord.self, from: data)
    }

    /// Writes the record to `file`, replacing it.
    func write(to file: URL) throws {
        try JSONEncoder().encode(self).write(to: file, options: .atomic)
    }
}
