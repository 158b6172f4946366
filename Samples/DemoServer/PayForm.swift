import Foundation

/// A form body (`application/x-www-form-urlencoded`) read as Rack reads one — the parser of
/// Ruby's web servers, which Rails and Stripe's API follow — into nested values:
/// `metadata[order]=7` is a table, `tags[]=a&tags[]=b` a list, and `items[0][price]=…` a table
/// keyed by indexes, which ``PayForm/Value/resolvingIndexes()`` turns into a list as Stripe does.
///
/// An array of objects written without indexes (`items[][price]=a&items[][quantity]=1&…`) is
/// read as Rack reads it: each pair goes into the last object unless that object has the key
/// already, so objects whose keys differ merge into the wrong ones.
enum PayForm {
    /// A value of the form.
    indirect enum Value: Sendable, Equatable {
        case text(String)
        case list([Value])
        case table(Table)

        /// The text, if the value is text.
        var text: String? {
            if case .text(let text) = self { text } else { nil }
        }

        /// The table, if the value is one.
        var table: Table? {
            if case .table(let table) = self { table } else { nil }
        }

        /// The same value with every table whose keys are all whole numbers made a list, in
        /// the order of those numbers.
        func resolvingIndexes() -> Value {
            switch self {
            case .text: return self
            case .list(let values): return .list(values.map { $0.resolvingIndexes() })
            case .table(let table):
                let resolved = Table(entries: table.entries.map { ($0.key, $0.value.resolvingIndexes()) })
                let indexes = resolved.entries.compactMap { Int($0.key) }
                guard !resolved.entries.isEmpty, indexes.count == resolved.entries.count else { return .table(resolved) }
                return .list(resolved.entries.sorted { Int($0.key)! < Int($1.key)! }.map(\.value))
            }
        }

        /// The value as JSON-compatible Foundation objects (texts stay text).
        var jsonObject: Any {
            switch self {
            case .text(let text): text
            case .list(let values): values.map(\.jsonObject)
            case .table(let table): Dictionary(table.entries.map { ($0.key, $0.value.jsonObject) }, uniquingKeysWith: { _, last in last })
            }
        }
    }

    /// Keys and values in the order they first came (as a Ruby hash keeps them).
    struct Table: Sendable, Equatable {
        var entries: [(key: String, value: Value)] = []

        init(entries: [(key: String, value: Value)] = []) {
            self.entries = entries
        }

        subscript(key: String) -> Value? {
            get { entries.first { $0.key == key }?.value }
            set {
                if let index = entries.firstIndex(where: { $0.key == key }) {
                    if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
                } else if let newValue {
                    entries.append((key, newValue))
                }
            }
        }

        static func == (one: Table, other: Table) -> Bool {
            one.entries.count == other.entries.count && zip(one.entries, other.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        }
    }

    /// A name whose parts contradict one another (`a=1&a[b]=2`), as Rack refuses it.
    struct Invalid: Error, CustomStringConvertible {
        let parameter: String
        let description: String
    }

    /// Parses a form body: pairs split on `&`, names and values percent-decoded (`+` a space).
    static func parse(_ body: String) throws(Invalid) -> Table {
        var table = Table()
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            let value = parts.count > 1 ? decode(parts[1]) : ""
            try normalize(&table, name[...], value, depth: 32)
        }
        return table
    }

    private static func decode(_ text: Substring) -> String {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
    }

    /// Rack's `normalize_params`: puts `value` at the place `name` describes in `table`.
    private static func normalize(_ table: inout Table, _ name: Substring, _ value: String, depth: Int) throws(Invalid) {
        guard depth > 0 else { throw Invalid(parameter: String(name), description: "the parameter is nested too deeply") }
        // `\A[\[\]]*([^\[\]]+)\]*`: the first name, and what comes after it.
        var rest = name.drop { $0 == "[" || $0 == "]" }
        let key = String(rest.prefix { $0 != "[" && $0 != "]" })
        rest = rest.dropFirst(key.count).drop { $0 == "]" }
        let after = rest
        guard !key.isEmpty else { return }
        if after.isEmpty {
            table[key] = .text(value)
        } else if after == "[" {
            table[String(name)] = .text(value)
        } else if after == "[]" {
            guard case .list(var values) = table[key] ?? .list([]) else { throw conflict(key, expected: "an array") }
            values.append(.text(value))
            table[key] = .list(values)
        } else if after.hasPrefix("[]") {
            let child = childKey(after)
            guard case .list(var values) = table[key] ?? .list([]) else { throw conflict(key, expected: "an array") }
            if case .table(var last)? = values.last, !hasKey(last, child) {
                try normalize(&last, child, value, depth: depth - 1)
                values[values.count - 1] = .table(last)
            } else {
                var fresh = Table()
                try normalize(&fresh, child, value, depth: depth - 1)
                values.append(.table(fresh))
            }
            table[key] = .list(values)
        } else {
            guard case .table(var inner) = table[key] ?? .table(Table()) else { throw conflict(key, expected: "a hash") }
            try normalize(&inner, after, value, depth: depth - 1)
            table[key] = .table(inner)
        }
    }

    /// After `[]`: `[name]` alone is `name`; anything longer is kept as it is.
    private static func childKey(_ after: Substring) -> Substring {
        let inner = after.dropFirst(2)
        if inner.first == "[", inner.last == "]", inner.count > 2, !inner.dropFirst().dropLast().contains(where: { $0 == "[" || $0 == "]" }) {
            return inner.dropFirst().dropLast()
        }
        return inner
    }

    /// Rack's `params_hash_has_key?`: whether the path `key` names already holds a value.
    private static func hasKey(_ table: Table, _ key: Substring) -> Bool {
        if key.contains("[]") { return false }
        var current: Value = .table(table)
        for part in key.split(whereSeparator: { $0 == "[" || $0 == "]" }) {
            guard case .table(let inner) = current, let next = inner[String(part)] else { return false }
            current = next
        }
        return true
    }

    private static func conflict(_ key: String, expected: String) -> Invalid {
        Invalid(parameter: key, description: "expected \(expected) for parameter \(key)")
    }
}
