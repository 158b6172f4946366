import COpenSSL
package import Foundation

/// Message digests and HMACs on OpenSSL's libcrypto.
package enum Digest {
    /// A hash function.
    public enum Algorithm: Sendable, Hashable {
        /// SHA-256.
        case sha256
        /// SHA-1 (for old backends only).
        case sha1
        /// SHA-512.
        case sha512
        /// MD5 (the legacy signature scheme only; not a secure hash).
        case md5

        fileprivate var evp: OpaquePointer? {
            switch self {
            case .sha256: EVP_sha256()
            case .sha1: EVP_sha1()
            case .sha512: EVP_sha512()
            case .md5: EVP_md5()
            }
        }
    }

    /// The digest of `data`.
    ///
    /// - Parameters:
    ///   - data: The bytes to hash.
    ///   - algorithm: The hash function; SHA-256 by default.
    /// - Returns: The raw digest.
    public static func hash(_ data: some DataProtocol, algorithm: Algorithm = .sha256) -> [UInt8] {
        var hasher = StreamingHash(algorithm)
        hasher.update(data)
        return hasher.finish()
    }

    /// The HMAC of `data` keyed with `key`.
    ///
    /// - Parameters:
    ///   - data: The message.
    ///   - key: The secret key bytes.
    ///   - algorithm: The hash function; SHA-256 by default.
    /// - Returns: The raw authentication code.
    public static func hmac(_ data: some DataProtocol, key: some DataProtocol, algorithm: Algorithm = .sha256) -> [UInt8] {
        let schedule = HMACKeySchedule.cached(for: Array(key), algorithm: algorithm)
        return schedule.authenticate(data)
    }

    /// Compares two byte strings in time that depends only on their length, for checking
    /// signatures without leaking where they first differ.
    ///
    /// - Returns: Whether the two are equal.
    public static func constantTimeEquals(_ lhs: some DataProtocol, _ rhs: some DataProtocol) -> Bool {
        let left = Array(lhs)
        let right = Array(rhs)
        guard left.count == right.count else { return false }
        guard !left.isEmpty else { return true }
        return left.withUnsafeBytes { l in right.withUnsafeBytes { r in CRYPTO_memcmp(l.baseAddress, r.baseAddress, l.count) == 0 } }
    }

    /// Lowercase hexadecimal.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        Array(bytes).withUnsafeBytes { hex($0) }
    }

    /// Lowercase hexadecimal of `bytes`, written straight into the string's storage (one
    /// allocation).
    package static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            if let start = output.baseAddress { writeHex(of: bytes, to: start) }
            return bytes.count * 2
        }
    }

    /// Writes the lowercase hexadecimal of `bytes` at `output`, which has room for twice as many
    /// bytes. (Through a pointer, with no bounds check per digit: every request's nonce, body
    /// hash and signature go through here.)
    private static func writeHex(of bytes: UnsafeRawBufferPointer, to output: UnsafeMutablePointer<UInt8>) {
        var digit = output
        for byte in bytes {
            digit[0] = hexDigit(byte >> 4)
            digit[1] = hexDigit(byte & 0x0F)
            digit += 2
        }
    }

    /// The lowercase hexadecimal digit of a value under 16.
    @inline(__always) private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "a") &+ (value &- 10)
    }

    /// The HMAC of `data` keyed with `key`, in lowercase hexadecimal.
    package static func hmacHex(_ data: [UInt8], key: [UInt8], algorithm: Algorithm = .sha256) -> String {
        HMACKeySchedule.cached(for: key, algorithm: algorithm).authenticate(data) { hex($0) }
    }

    /// Writes the lowercase hexadecimal HMAC-SHA256 of `data`, keyed with `key`, at `output`,
    /// which has room for its 64 digits.
    package static func writeHMACSHA256Hex(of data: [UInt8], key: [UInt8], to output: UnsafeMutablePointer<UInt8>) {
        HMACKeySchedule.cached(for: key, algorithm: .sha256).authenticate(data) { code in writeHex(of: code, to: output) }
    }

    /// Appends the lowercase hexadecimal form of `bytes` to `text`. (Of an array, not of any
    /// sequence: the signers above call it for every request, and a generic function from
    /// another module runs unspecialized.)
    package static func appendHex(of bytes: [UInt8], to text: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count * 2) { digits in
            guard let start = digits.baseAddress else { return }
            bytes.withUnsafeBytes { writeHex(of: $0, to: start) }
            text.append(contentsOf: digits)
        }
    }

    /// `count` bytes from OpenSSL's cryptographically secure generator.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let status = RAND_bytes(&bytes, Int32(count))
        precondition(status == 1, "OpenSSL's RAND_bytes failed: the system has no usable entropy source")
        return bytes
    }
}

/// A hash computed over data fed in pieces (a request body streamed from a file).
package struct StreamingHash: ~Copyable {
    private let context: OpaquePointer

    package init(_ algorithm: Digest.Algorithm) {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, algorithm.evp, nil)
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    package mutating func update(_ data: some DataProtocol) {
        for region in data.regions {
            region.withUnsafeBytes { buffer in
                if let base = buffer.baseAddress { _ = EVP_DigestUpdate(context, base, buffer.count) }
            }
        }
    }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        if let base = buffer.baseAddress { _ = EVP_DigestUpdate(context, base, buffer.count) }
    }

    package consuming func finish() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return Array(output.prefix(Int(length)))
    }
}

/// An HMAC key prepared once: the hash states after absorbing the padded key XOR `ipad` and
/// XOR `opad` (RFC 2104). Each code then costs two state copies and the message, instead of
/// OpenSSL 3 fetching the algorithm and deriving the key again for every signature.
final class HMACKeySchedule: @unchecked Sendable {
    // Unchecked: `inner` and `outer` are written only in init and afterwards only read, as the
    // source of EVP_MD_CTX_copy_ex, which does not modify its source; the spare context is
    // handed from call to call under its lock, so one call at a time uses it.
    private let inner: OpaquePointer
    private let outer: OpaquePointer
    /// A context kept for the next call (holding nothing secret once a call has finished with it,
    /// beyond what `inner` and `outer` already hold).
    private let spare = Locked<OpaquePointer?>(nil)

    private struct Key: Hashable {
        var algorithm: Digest.Algorithm
        var bytes: [UInt8]
    }

    /// Recently used keys (a service has one or two); emptied when it grows past 32.
    private struct Cache {
        var schedules: [Key: HMACKeySchedule] = [:]
        /// The last key asked for: a request usually signs with the key the one before it used,
        /// and comparing with it (for the same array, no more than an identity check) costs
        /// less than hashing the key for the dictionary.
        var last: (key: Key, schedule: HMACKeySchedule)?
    }

    private static let cache = Locked(Cache())

    static func cached(for key: [UInt8], algorithm: Digest.Algorithm) -> HMACKeySchedule {
        let found = cache.withLock { cache -> HMACKeySchedule? in
            if let last = cache.last, last.key.algorithm == algorithm, last.key.bytes == key { return last.schedule }
            let cacheKey = Key(algorithm: algorithm, bytes: key)
            guard let schedule = cache.schedules[cacheKey] else { return nil }
            cache.last = (cacheKey, schedule)
            return schedule
        }
        if let found { return found }
        let schedule = HMACKeySchedule(key: key, algorithm: algorithm)
        let cacheKey = Key(algorithm: algorithm, bytes: key)
        cache.withLock { cache in
            if cache.schedules.count >= 32 { cache.schedules.removeAll() }
            cache.schedules[cacheKey] = schedule
            cache.last = (cacheKey, schedule)
        }
        return schedule
    }

    private init(key: [UInt8], algorithm: Digest.Algorithm) {
        let blockSize = Int(EVP_MD_get_block_size(algorithm.evp))
        var block = key.count > blockSize ? Digest.hash(key, algorithm: algorithm) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        inner = EVP_MD_CTX_new()
        outer = EVP_MD_CTX_new()
        EVP_DigestInit_ex(inner, algorithm.evp, nil)
        EVP_DigestInit_ex(outer, algorithm.evp, nil)
        let innerPad = block.map { $0 ^ 0x36 }
        let outerPad = block.map { $0 ^ 0x5C }
        EVP_DigestUpdate(inner, innerPad, innerPad.count)
        EVP_DigestUpdate(outer, outerPad, outerPad.count)
    }

    deinit {
        EVP_MD_CTX_free(inner)
        EVP_MD_CTX_free(outer)
        spare.withLock { spare in
            if let spare { EVP_MD_CTX_free(spare) }
        }
    }

    func authenticate(_ data: some DataProtocol) -> [UInt8] {
        authenticate(data) { Array($0.bindMemory(to: UInt8.self)) }
    }

    /// Computes the HMAC into a buffer on the stack and hands it to `body`.
    func authenticate<Result>(_ data: some DataProtocol, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let context = takeContext()
        defer { returnContext(context) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { digest in
            var length: UInt32 = 0
            EVP_MD_CTX_copy_ex(context, inner)
            for region in data.regions {
                region.withUnsafeBytes { buffer in
                    if let base = buffer.baseAddress { _ = EVP_DigestUpdate(context, base, buffer.count) }
                }
            }
            EVP_DigestFinal_ex(context, digest.baseAddress, &length)
            EVP_MD_CTX_copy_ex(context, outer)
            EVP_DigestUpdate(context, digest.baseAddress, Int(length))
            EVP_DigestFinal_ex(context, digest.baseAddress, &length)
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(digest)[0..<Int(length)]))
        }
    }

    /// A context to compute in: the one kept from an earlier call, or a new one. Reusing it
    /// saves OpenSSL allocating a context and its digest state per signature.
    private func takeContext() -> OpaquePointer {
        spare.withLock { spare in
            defer { spare = nil }
            return spare
        } ?? EVP_MD_CTX_new()
    }

    private func returnContext(_ context: OpaquePointer) {
        let extra = spare.withLock { spare -> OpaquePointer? in
            guard spare == nil else { return context }
            spare = context
            return nil
        }
        if let extra { EVP_MD_CTX_free(extra) }
    }
}
