import Foundation

extension JSONValue {
    /// The value as a JSON body: the bytes Foundation's `JSONSerialization` writes with
    /// `.sortedKeys` and `.withoutEscapingSlashes` (keys ordered as it orders them, numbers and
    /// escapes as it writes them), written directly. Through `JSONSerialization` on Linux the
    /// dictionary is bridged to `NSDictionary`, each value cast at run time and the whole
    /// checked beforehand: a large share of a signed POST load (see `Benchmarks/history/notes.md`).
    ///
    /// - Returns: The JSON text, or `nil` when a number is not finite (JSON has no NaN or infinity).
    func jsonBody() -> Data? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        guard appendJSON(to: &bytes) else { return nil }
        return Data(bytes)
    }

    /// Appends the value's JSON; `false` when a number is not finite.
    private func appendJSON(to bytes: inout [UInt8]) -> Bool {
        switch self {
        case .string(let text):
            Self.appendJSONString(text, to: &bytes)
        case .integer(let number):
            bytes.append(contentsOf: String(number).utf8)
        case .number(let number):
            guard number.isFinite else { return false }
            // As `JSONSerialization` writes it: the number's description without a trailing ".0".
            var text = number.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            bytes.append(contentsOf: text.utf8)
        case .bool(let flag):
            bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null:
            bytes.append(contentsOf: "null".utf8)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                guard element.appendJSON(to: &bytes) else { return false }
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, name) in Self.sortedKeys(members.keys).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.appendJSONString(name, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                guard members[name]?.appendJSON(to: &bytes) ?? false else { return false }
            }
            bytes.append(UInt8(ascii: "}"))
        }
        return true
    }

    /// Member names in `JSONSerialization`'s `.sortedKeys` order: numbers within names compared
    /// by value (`item2` before `item10`), case aside (`a`, `A`, `b`, `B`), ties decided.
    private static func sortedKeys(_ keys: Dictionary<String, JSONValue>.Keys) -> [String] {
        if keys.count < 2 { return Array(keys) }
        return keys.sorted { left, right in
            left.compare(right, options: [.numeric, .caseInsensitive, .forcedOrdering], range: left.startIndex..<left.endIndex, locale: systemLocale)
                == .orderedAscending
        }
    }

    /// The locale `JSONSerialization` compares keys in (the system's, not the user's).
    private static let systemLocale = Locale(identifier: "")

    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped
    /// (`\n`, `\t`, … or `\u001f`), everything else, slashes and non-ASCII included, as it is.
    private static func appendJSONString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
            case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
