public import Foundation

extension FileDownload {
    /// Why a download failed, with what it left behind.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public enum Reason: Sendable {
            /// No complete response: the transfer failed (a dropped connection can be resumed).
            case transport(TransportError)
            /// The server answered with a status that brings no file (its body is the response's).
            case httpStatus(HTTPResponse)
            /// The file arrived, but its SHA-256 is not the one expected; it was removed.
            case integrity(expected: String, actual: String)
            /// The file could not be written, moved or read back.
            case file(String)
            /// The server's answer cannot be a file: a range that does not start where the partial
            /// file ends, a size that does not add up.
            case invalidResponse(String)
        }

        /// What went wrong.
        public var reason: Reason
        /// The destination.
        public var destination: URL
        /// How many bytes the partial file holds for a later resume (0 when it was removed).
        public var partialBytes: Int64

        /// `download to /tmp/big.iso failed: connection dropped …; 1,048,576 bytes kept for resuming`.
        public var description: String {
            let what: String
            switch reason {
            case .transport(let error): what = "\(error)"
            case .httpStatus(let response): what = "the server answered \(response.statusCode)"
            case .integrity(let expected, let actual): what = "the file's SHA-256 is \(actual), not \(expected); it was removed"
            case .file(let problem): what = problem
            case .invalidResponse(let problem): what = problem
            }
            let kept = partialBytes > 0 ? "; \(partialBytes) bytes kept for resuming" : ""
            return "download to \(destination.path) failed: \(what)\(kept)"
        }
    }
}
