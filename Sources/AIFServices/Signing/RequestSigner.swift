import COpenSSL
public import Foundation
import Synchronization
@_spi(CrossModule) import AIFTransport

/// Signs a request: the last step before it is sent, on the final bytes.
///
/// A signer returns a new request with whatever it adds (query parameters, headers); it must
/// not change anything it has signed afterwards. A retried or redirected request is signed
/// afresh, with a fresh nonce.
public protocol RequestSigner: Sendable {
    /// Signs `request`.
    ///
    /// - Parameters:
    ///   - request: The request, complete but for its signature.
    ///   - credentials: Whose keys sign it.
    ///   - context: The time and nonce to sign with.
    /// - Returns: The signed request.
    /// - Throws: ``SigningError`` when the request cannot be signed (an unreadable body file).
    func sign(_ request: HTTPRequest, credentials: SigningContext.Credentials, context: SigningContext) throws(SigningError) -> HTTPRequest

    /// The signer as it signs for an environment: covering every query parameter, or — when
    /// `allParameters` is `false` (``ServiceEnvironment/signsAllParameters``) — only the fields
    /// it adds itself. A scheme that always covers the same parts returns itself, the default.
    ///
    /// - Parameter allParameters: Whether every query parameter is signed.
    /// - Returns: The signer to sign with.
    func covering(allParameters: Bool) -> any RequestSigner

    /// The scheme in a few words, for listings (`AIF-HMAC, fields in the query`); the type's
    /// name by default.
    var schemeDescription: String { get }

    /// The signed URL as text, for a URL its builder holds as text — what
    /// ``sign(_:credentials:context:)`` makes of the same request, without parsing a URL or
    /// building one in between — when the scheme adds only query parameters and covers no more
    /// than the method, the URL and the body; `nil` otherwise (the default), and the request is
    /// signed by ``sign(_:credentials:context:)``.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - prefix: The URL up to the end of its path, as it will be sent.
    ///   - path: The path within `prefix` (empty for none).
    ///   - query: The URL's own query, percent-encoded as it stands (empty for none).
    ///   - parameters: The decoded query parameters that follow it, in order.
    ///   - body: The request's body.
    ///   - allParameters: Whether every query parameter is signed (see ``covering(allParameters:)``).
    ///   - credentials: Whose keys sign it.
    ///   - context: The time and nonce to sign with.
    /// - Returns: The whole signed URL, or `nil`.
    func signedURLText(
        method: HTTPMethod, prefix: Substring, path: Substring, query: Substring, adding parameters: [(name: String, value: String)],
        body: HTTPRequest.Body,
        coveringAllParameters allParameters: Bool, credentials: SigningContext.Credentials, context: SigningContext
    ) -> String?
}

extension RequestSigner {
    /// The type's name.
    public var schemeDescription: String { String(describing: Self.self) }

    /// Returns `self`: the scheme covers what it covers.
    ///
    /// - Parameter allParameters: Ignored.
    /// - Returns: `self`.
    public func covering(allParameters: Bool) -> any RequestSigner { self }

    /// `nil`: the request is signed by ``sign(_:credentials:context:)``.
    public func signedURLText(
        method: HTTPMethod, prefix: Substring, path: Substring, query: Substring, adding parameters: [(name: String, value: String)],
        body: HTTPRequest.Body,
        coveringAllParameters allParameters: Bool, credentials: SigningContext.Credentials, context: SigningContext
    ) -> String? {
        nil
    }
}

extension SigningContext {
    /// The keys of one environment of a service.
    public struct Credentials: Sendable, Hashable {
        /// The public key (API key, key id), sent with the request.
        public var publicKey: String
        /// The private key, never sent.
        public var privateKey: Secret

        /// Creates credentials.
        public init(publicKey: String, privateKey: Secret) {
            self.publicKey = publicKey
            self.privateKey = privateKey
        }
    }
}

/// When, and with which nonce, a request is signed.
public struct SigningContext: Sendable, Hashable {
    /// The signing time, already corrected for the server's clock.
    public var time: Date
    /// 32 lowercase hexadecimal characters, fresh for every request sent.
    public var nonce: String

    /// Creates a context with a given time and nonce (for tests and replays of known vectors).
    public init(time: Date, nonce: String) {
        self.time = time
        self.nonce = nonce
    }

    /// A context for now: the local clock plus `clockOffset`, and a fresh nonce from
    /// OpenSSL's secure generator.
    ///
    /// - Parameter clockOffset: How far the server's clock is ahead of ours, in seconds.
    /// - Returns: The context.
    public static func now(clockOffset: TimeInterval = 0) -> SigningContext {
        at(Date(), clockOffset: clockOffset)
    }

    /// A fresh nonce, and `date` (a load's clock's time) corrected by `clockOffset`.
    package static func at(_ date: Date, clockOffset: TimeInterval = 0) -> SigningContext {
        SigningContext(time: date.addingTimeInterval(clockOffset), nonce: NoncePool.shared.nonce())
    }

    /// The time as whole Unix seconds.
    public var unixSeconds: Int64 {
        Int64(time.timeIntervalSince1970.rounded(.down))
    }
}

/// How many times this process is a child of `fork()` since it started: bumped in the child by
/// the handler ``NoncePool`` registers with `pthread_atfork`.
private let forkGeneration = Atomic<UInt64>(0)

/// Nonces from OpenSSL's secure generator, drawn 4 KiB at a time: one `RAND_bytes` call per
/// 256 nonces instead of one per request (each call takes OpenSSL's locks and reseeding
/// checks). Bytes are handed out once and wiped as they go; a forked child discards what it
/// inherited and draws afresh, so two processes never share one. (The child is told by a fork
/// handler, not by comparing process IDs: `getpid` is a system call, which each nonce would make.)
final class NoncePool: Sendable {
    static let shared = NoncePool()

    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var offset = 4096
        var generation: UInt64 = 0
    }

    private let pool = Locked(Pool())

    private init() {
        pthread_atfork(nil, nil, { forkGeneration.add(1, ordering: .relaxed) })
    }

    /// 32 lowercase hex characters (16 random bytes), never handed out before.
    func nonce() -> String {
        pool.withLock { pool in
            let generation = forkGeneration.load(ordering: .relaxed)
            if pool.offset + 16 > pool.bytes.count || pool.generation != generation {
                let status = RAND_bytes(&pool.bytes, Int32(pool.bytes.count))
                precondition(status == 1, "OpenSSL's RAND_bytes failed: the system has no usable entropy source")
                pool.offset = 0
                pool.generation = generation
            }
            let offset = pool.offset
            pool.offset += 16
            return pool.bytes.withUnsafeMutableBytes { bytes in
                let drawn = UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<(offset + 16)])
                defer { drawn.initializeMemory(as: UInt8.self, repeating: 0) }
                return Digest.hex(UnsafeRawBufferPointer(drawn))
            }
        }
    }
}

/// Why a request could not be signed.
public struct SigningError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in plain words (never containing a secret).
    public let reason: String
    /// The request URL.
    public let url: String

    /// Creates an error.
    public init(_ reason: String, url: String) {
        self.reason = reason
        self.url = TransportError.redactingPassword(in: url)
    }

    /// The reason and the URL.
    public var description: String { "cannot sign \(url): \(reason)" }
}

extension HTTPRequest.Body {
    /// The SHA-256 of the exact bytes that will be sent (of nothing for an empty body).
    func sha256(url: URL) throws(SigningError) -> [UInt8] {
        switch self {
        case .empty:
            return Self.emptySHA256
        case .bytes(let data):
            return Digest.hash(data)
        case .file(let path):
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw SigningError("the request body file \(path) cannot be opened", url: url.absoluteString)
            }
            defer { try? handle.close() }
            var hash = StreamingHash(.sha256)
            while true {
                let chunk: Data
                do {
                    chunk = try handle.read(upToCount: 1 << 16) ?? Data()
                } catch {
                    throw SigningError("reading the request body file \(path) failed: \(error)", url: url.absoluteString)
                }
                if chunk.isEmpty { break }
                hash.update(chunk)
            }
            return hash.finish()
        case .stream:
            throw SigningError(
                "a streamed body cannot be signed over its bytes: they are not known before they are sent; send a file (.file) to sign its digest",
                url: url.absoluteString)
        case .multipart:
            throw SigningError(
                "a multipart/form-data body cannot be signed over its bytes: libcurl chooses its boundary as it sends it; send the file as the raw body (.file) to sign its digest",
                url: url.absoluteString)
        }
    }
}

extension HTTPRequest.Body {
    /// The SHA-256 of no bytes, which most signed requests (GET, DELETE) hash.
    static let emptySHA256 = Digest.hash([UInt8]())
}
