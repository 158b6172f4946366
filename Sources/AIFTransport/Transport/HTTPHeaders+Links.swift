public import Foundation

extension HTTPHeaders {
    /// One link of a `Link` field (RFC 8288): `<https://api.example.com/issues?page=2>; rel="next"`.
    public struct Link: Sendable, Hashable {
        /// The target as written between `<` and `>`: absolute, or relative to the response's URL.
        public var target: String
        /// The relation types (`rel`), lowercased: `["next"]`, or several (`rel="next last"`).
        public var relations: [String]
        /// The link's other parameters (`title`, `type`, …), names lowercased, values unquoted.
        public var parameters: [String: String]

        /// Creates a link.
        public init(target: String, relations: [String], parameters: [String: String] = [:]) {
            self.target = target
            self.relations = relations.map { $0.lowercased() }
            self.parameters = parameters
        }

        /// The target as a URL, a relative one resolved against `base` (the URL the response
        /// came from); `nil` when it is not a URL.
        public func url(relativeTo base: URL?) -> URL? {
            URL(string: target, relativeTo: base)?.absoluteURL
        }
    }

    /// The links of every `Link` field, in order. A link that does not parse (no `<…>`, an
    /// unterminated quote) is left out; the ones around it are kept.
    public var links: [Link] {
        values(for: "Link").flatMap(Self.links(in:))
    }

    /// The first link with this relation type (`"next"`, `"last"`; compared without case).
    public func link(_ relation: String) -> Link? {
        let relation = relation.lowercased()
        return links.first { $0.relations.contains(relation) }
    }

    /// The links of one field value: `<target>; name=value; name="quoted", <target>; …`.
    static func links(in value: String) -> [Link] {
        var links: [Link] = []
        var scanner = Substring(value)
        while true {
            scanner = scanner.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard let first = scanner.first else { return links }
            guard first == "<", let close = scanner.firstIndex(of: ">") else {
                // Not a link: skip to the next one (a comma outside quotes).
                guard skipPastComma(&scanner) else { return links }
                continue
            }
            let target = String(scanner[scanner.index(after: scanner.startIndex)..<close])
            scanner = scanner[scanner.index(after: close)...]
            var parameters: [String: String] = [:]
            var wellFormed = true
            while true {
                scanner = scanner.drop { $0 == " " || $0 == "\t" }
                guard scanner.first == ";" else { break }
                scanner = scanner.dropFirst().drop { $0 == " " || $0 == "\t" }
                let name = scanner.prefix { !"=;, \t".contains($0) }
                scanner = scanner[name.endIndex...].drop { $0 == " " || $0 == "\t" }
                var parameterValue = ""
                if scanner.first == "=" {
                    scanner = scanner.dropFirst().drop { $0 == " " || $0 == "\t" }
                    if scanner.first == "\"" {
                        guard let (unquoted, rest) = quotedString(scanner) else {
                            wellFormed = false
                            break
                        }
                        parameterValue = unquoted
                        scanner = rest
                    } else {
                        let token = scanner.prefix { !";, \t".contains($0) }
                        parameterValue = String(token)
                        scanner = scanner[token.endIndex...]
                    }
                }
                // The first occurrence of a parameter counts (RFC 8288 §3).
                let key = name.lowercased()
                if !key.isEmpty, parameters[key] == nil { parameters[key] = parameterValue }
            }
            scanner = scanner.drop { $0 == " " || $0 == "\t" }
            if wellFormed, scanner.isEmpty || scanner.first == "," {
                let relations = (parameters.removeValue(forKey: "rel") ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                links.append(Link(target: target, relations: relations, parameters: parameters))
            } else if !wellFormed || !skipPastComma(&scanner) {
                return links
            }
        }
    }

    /// Moves past the next comma outside a quoted string; `false` when there is none.
    private static func skipPastComma(_ scanner: inout Substring) -> Bool {
        var quoted = false
        var escaped = false
        while let character = scanner.popFirst() {
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                return true
            }
        }
        return false
    }

    /// A quoted string at the start of `text`, unescaped, and what follows it; `nil` when it is
    /// not terminated.
    private static func quotedString(_ text: Substring) -> (String, Substring)? {
        var value = ""
        var rest = text.dropFirst()
        var escaped = false
        while let character = rest.popFirst() {
            if escaped {
                value.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return (value, rest)
            } else {
                value.append(character)
            }
        }
        return nil
    }
}
