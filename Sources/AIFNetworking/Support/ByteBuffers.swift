extension Array where Element == UInt8 {
    /// Appends the UTF-8 bytes of `text` in one copy: appending a substring's `utf8` view goes
    /// through the generic sequence path, one byte at a time.
    mutating func appendUTF8(of text: Substring) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
}
