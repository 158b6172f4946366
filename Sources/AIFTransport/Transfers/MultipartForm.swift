public import Foundation

extension HTTPRequest {
    /// A `multipart/form-data` body (RFC 7578): text fields, and files streamed from disk as they
    /// are sent (never read into memory whole).
    ///
    /// ```swift
    /// var form = HTTPRequest.MultipartForm()
    /// form.append("caption", "Holiday, day 1")
    /// form.appendFile("photo", at: "/tmp/IMG_0042.jpg")            // image/jpeg, from the extension
    /// let request = HTTPRequest(method: .post, url: uploadURL, body: .multipart(form))
    /// ```
    ///
    /// The transport builds the body with libcurl's MIME API, which chooses the boundary, sets
    /// `Content-Type: multipart/form-data; boundary=…` and the body's length, and encodes names
    /// and file names as browsers do (RFC 7578 section 4.2): UTF-8 kept as it is, `"` written
    /// `%22`, line breaks `%0D`/`%0A`. A request `Content-Type` of another `multipart/` subtype
    /// (`multipart/mixed`) is kept, with libcurl's boundary added; any other is refused.
    ///
    /// Because the boundary is chosen when the body is sent, its bytes are not known in advance:
    /// signing schemes that cover the body (AIF-HMAC's body hash, RFC 9421's `Content-Digest`)
    /// refuse a multipart body with a `SigningError` (AIFNetworking). Send a file as the raw body
    /// (``HTTPRequest/Body/file(path:)``) to have it signed over its digest.
    public struct MultipartForm: Sendable, Equatable {
        /// One part of the form.
        public struct Part: Sendable, Equatable {
            /// Where a part's bytes come from.
            public enum Content: Sendable, Hashable {
                /// These bytes (a text field's UTF-8, or a small file already in memory).
                case bytes(Data)
                /// The file at this path, read as it is sent.
                case file(path: String)
            }

            /// The field name.
            public var name: String
            /// The part's bytes.
            public var content: Content
            /// The `filename` parameter, or `nil` for none (a plain field).
            public var filename: String?
            /// The part's `Content-Type`, or `nil` for none (a plain field).
            public var contentType: String?
            /// More header fields of the part (rarely needed).
            public var headers: HTTPHeaders

            /// Describes a part.
            ///
            /// - Parameters:
            ///   - name: The field name.
            ///   - content: Its bytes, or the file they are read from.
            ///   - filename: The file name sent with it; none by default.
            ///   - contentType: Its content type; none by default.
            ///   - headers: More header fields of the part; none by default.
            public init(name: String, content: Content, filename: String? = nil, contentType: String? = nil, headers: HTTPHeaders = HTTPHeaders()) {
                self.name = name
                self.content = content
                self.filename = filename
                self.contentType = contentType
                self.headers = headers
            }
        }

        /// The parts, in the order they are sent.
        public var parts: [Part]

        /// A form with these parts (none by default).
        public init(_ parts: [Part] = []) {
            self.parts = parts
        }

        /// Adds a text field.
        ///
        /// - Parameters:
        ///   - name: The field name.
        ///   - value: Its value, sent as UTF-8 without a content type, as browsers send fields.
        public mutating func append(_ name: String, _ value: String) {
            parts.append(Part(name: name, content: .bytes(Data(value.utf8))))
        }

        /// Adds a file from disk, streamed as it is sent.
        ///
        /// - Parameters:
        ///   - name: The field name.
        ///   - path: The file's path; it must be a readable regular file when the request is sent.
        ///   - filename: The name sent with it; the path's last component by default.
        ///   - contentType: Its content type; by default from the file name's extension
        ///     (``contentType(forFileName:)``).
        public mutating func appendFile(_ name: String, at path: String, filename: String? = nil, contentType: String? = nil) {
            let sentName = filename ?? URL(fileURLWithPath: path).lastPathComponent
            parts.append(Part(name: name, content: .file(path: path), filename: sentName, contentType: contentType ?? Self.contentType(forFileName: sentName)))
        }

        /// Adds bytes in memory as a file.
        ///
        /// - Parameters:
        ///   - name: The field name.
        ///   - data: The file's bytes.
        ///   - filename: The name sent with them.
        ///   - contentType: Their content type; by default from the file name's extension.
        public mutating func appendFile(_ name: String, data: Data, filename: String, contentType: String? = nil) {
            parts.append(Part(name: name, content: .bytes(data), filename: filename, contentType: contentType ?? Self.contentType(forFileName: filename)))
        }

        /// The content type a file name's extension suggests (case-insensitive), or
        /// `application/octet-stream` for an extension not in the table.
        ///
        /// - Parameter fileName: A file name or path.
        /// - Returns: A media type such as `image/png`.
        public static func contentType(forFileName fileName: String) -> String {
            guard let dot = fileName.lastIndex(of: "."), !fileName[dot...].contains("/") else { return "application/octet-stream" }
            return typesByExtension[fileName[fileName.index(after: dot)...].lowercased()] ?? "application/octet-stream"
        }

        private static let typesByExtension: [String: String] = [
            "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown", "csv": "text/csv",
            "tsv": "text/tab-separated-values", "html": "text/html", "htm": "text/html", "css": "text/css",
            "js": "text/javascript", "mjs": "text/javascript", "xml": "application/xml", "json": "application/json",
            "yaml": "application/yaml", "yml": "application/yaml", "pdf": "application/pdf", "zip": "application/zip",
            "gz": "application/gzip", "tgz": "application/gzip", "tar": "application/x-tar", "bz2": "application/x-bzip2",
            "xz": "application/x-xz", "zst": "application/zstd", "7z": "application/x-7z-compressed", "wasm": "application/wasm",
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
            "avif": "image/avif", "heic": "image/heic", "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon",
            "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff", "mp3": "audio/mpeg", "wav": "audio/wav",
            "ogg": "audio/ogg", "oga": "audio/ogg", "flac": "audio/flac", "m4a": "audio/mp4", "aac": "audio/aac",
            "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm", "mkv": "video/x-matroska",
            "avi": "video/x-msvideo", "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        ]
    }
}
