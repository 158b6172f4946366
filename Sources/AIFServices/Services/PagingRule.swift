import Foundation

/// How a service's listings — or one define's — are paged, as a config file says (`paging`):
/// what `aif call --all-pages` and `aif api --all-pages` follow, and what a manager's paging
/// settings can be made from.
///
/// ```json
/// "paging": {"style": "afterLastItem", "parameter": "starting_after", "sizeParameter": "limit", "itemsField": "data"}
/// ```
///
/// The keys: `style` — `page` (numbered pages), `offset` (an item offset), `afterLastItem` (the
/// next page starts after the previous page's last item, named by its ID: Stripe's
/// `starting_after`, Shopify's `since_id`) or `link` (`Link: <…>; rel="next"`); `parameter`
/// (the page's, by default `page`, `offset` or `starting_after`); `firstPage` (1);
/// `sizeParameter`; `itemsField` (where a page's items are, by default the body or its array
/// member); `idField` (an item's ID, `id`); `hasMoreField` (whether more follow: `has_more` or
/// `hasMore` by default).
public struct PagingRule: Sendable, Hashable {
    /// How pages are named.
    public enum Style: String, Sendable, Hashable, CaseIterable {
        /// Numbered pages.
        case page
        /// An item offset.
        case offset
        /// After the previous page's last item, by its ID.
        case afterLastItem
        /// As the previous page's `Link` header points.
        case link
    }

    /// How pages are named.
    public var style: Style
    /// The page's parameter: the number, the offset or the last item's ID (`nil` for `link`).
    public var parameter: String?
    /// The first page's number, for `page`.
    public var firstPage: Int
    /// The page size's parameter, if the listing takes one.
    public var sizeParameter: String?
    /// The member of a page that holds its items, when the page is an object.
    public var itemsField: String?
    /// The member of an item that holds its ID, for `afterLastItem`.
    public var idField: String
    /// The member of a page that says whether more follow.
    public var hasMoreField: String?

    /// Creates a rule.
    ///
    /// - Parameters:
    ///   - style: How pages are named.
    ///   - parameter: The page's parameter; the style's usual one by default.
    ///   - firstPage: The first page's number; 1 by default.
    ///   - sizeParameter: The page size's parameter; none by default.
    ///   - itemsField: Where a page's items are; the body or its array member by default.
    ///   - idField: An item's ID; `id` by default.
    ///   - hasMoreField: Whether more follow; `has_more` or `hasMore` by default.
    public init(
        style: Style, parameter: String? = nil, firstPage: Int = 1, sizeParameter: String? = nil, itemsField: String? = nil, idField: String = "id",
        hasMoreField: String? = nil
    ) {
        self.style = style
        self.parameter = parameter ?? Self.usualParameter(of: style)
        self.firstPage = firstPage
        self.sizeParameter = sizeParameter
        self.itemsField = itemsField
        self.idField = idField
        self.hasMoreField = hasMoreField
    }

    /// The parameter a style's pages usually take.
    public static func usualParameter(of style: Style) -> String? {
        switch style {
        case .page: "page"
        case .offset: "offset"
        case .afterLastItem: "starting_after"
        case .link: nil
        }
    }

    /// The keys a `paging` section may have.
    static let keys = ["firstPage", "hasMoreField", "idField", "itemsField", "parameter", "sizeParameter", "style"]

    /// Reads a `paging` section; a mistake is thrown as the key it is at (under `path`) and
    /// what is wrong, for the caller to place in its file.
    static func read(_ value: JSONValue, at path: String, reader: ConfigReader) throws(ServiceRegistry.ConfigurationError) -> PagingRule {
        func problem(_ key: String, _ text: String) -> ServiceRegistry.ConfigurationError {
            ServiceRegistry.ConfigurationError(file: reader.file, key: key, problem: text)
        }
        guard case .object(let members) = value else { throw problem(path, "must be an object (style, parameter, …)") }
        if let unknown = members.keys.sorted().first(where: { !keys.contains($0) }) {
            throw problem("\(path).\(unknown)", "is not a known key; expected one of: \(keys.joined(separator: ", "))")
        }
        func text(_ key: String) throws(ServiceRegistry.ConfigurationError) -> String? {
            guard let member = members[key] else { return nil }
            guard case .string(let written) = member else { throw problem("\(path).\(key)", "must be a string") }
            let value = try reader.substitute(written, at: "\(path).\(key)")
            guard !value.isEmpty else { throw problem("\(path).\(key)", "is empty") }
            return value
        }
        guard let styleName = try text("style") else { throw problem("\(path).style", "is missing: page, offset, afterLastItem or link") }
        guard let style = Style(rawValue: styleName) else {
            throw problem("\(path).style", "\"\(styleName)\" is not one of: \(Style.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var firstPage = 1
        if let member = members["firstPage"] {
            guard case .integer(let number) = member, number >= 0 else { throw problem("\(path).firstPage", "must be a whole number, 0 or more") }
            firstPage = number
        }
        let parameter = try text("parameter")
        if style == .link, parameter != nil { throw problem("\(path).parameter", "has no use with the link style: the link carries the parameters") }
        return PagingRule(
            style: style, parameter: parameter, firstPage: firstPage, sizeParameter: try text("sizeParameter"), itemsField: try text("itemsField"),
            idField: try text("idField") ?? "id", hasMoreField: try text("hasMoreField"))
    }
}
