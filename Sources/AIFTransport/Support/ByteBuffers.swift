extension Array where Element == UInt8 {
    /// Appends the UTF-8 bytes of `text` in one copy: appending a substring's `utf8` view goes
    /// through the generic sequence path, one byte at a time. (SPI, for the reason ``ByteWord``
    /// gives.)
    @_spi(CrossModule) @inlinable
    public mutating func appendUTF8(of text: Substring) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
}

/// Tests on eight bytes at once (the classic "has a zero byte" bit tricks), for scans that skip
/// ahead while no byte of a word needs a closer look. Each test is nonzero exactly when some
/// byte of the word qualifies.
///
/// Inlinable, and for that SPI rather than package access: the JSON scanner in AIFServices runs
/// them on every word, and this compiler inlines a package declaration into another module
/// only when it is public (as calls, they were a measurable share of a manager load).
@_spi(CrossModule) public enum ByteWord {
    /// A one in every byte.
    @inlinable public static var ones: UInt64 { 0x0101_0101_0101_0101 }
    /// The high bit of every byte.
    @inlinable public static var highs: UInt64 { 0x8080_8080_8080_8080 }

    /// The eight bytes at `offset`, in memory order (little-endian machines: first byte lowest).
    @inlinable @inline(__always) public static func load(_ base: UnsafePointer<UInt8>, at offset: Int) -> UInt64 {
        UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
    }

    /// Whether some byte of `word` equals `byte`.
    @inlinable @inline(__always) public static func contains(_ word: UInt64, _ byte: UInt8) -> Bool {
        let difference = word ^ (ones &* UInt64(byte))
        return (difference &- ones) & ~difference & highs != 0
    }

    /// Whether some byte of `word` is below `limit` (at most 0x80).
    @inlinable @inline(__always) public static func containsByte(_ word: UInt64, below limit: UInt8) -> Bool {
        (word &- ones &* UInt64(limit)) & ~word & highs != 0
    }

    /// Whether some byte of `word` is 0x80 or above.
    @inlinable @inline(__always) public static func containsNonASCII(_ word: UInt64) -> Bool {
        word & highs != 0
    }
}
