import Foundation

/// A secret: a signing key, a key's passphrase. Its description never shows it.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret's bytes.
    public let bytes: [UInt8]

    /// A secret given as text, used as its UTF-8 bytes (the AIF-HMAC and legacy schemes' keys, a passphrase).
    public init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// A key given as bytes.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A key given in base64, or `nil` when `base64` is not valid base64.
    public init?(base64: String) {
        guard let data = Data(base64Encoded: base64) else { return nil }
        bytes = Array(data)
    }

    /// `***`: secrets are never printed.
    public var description: String { "***" }
    /// `Secret(***)`: secrets are never printed.
    public var debugDescription: String { "Secret(***)" }
}
