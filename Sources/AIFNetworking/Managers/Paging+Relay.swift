extension Paging {
    /// A GraphQL connection as Relay's specification shapes it — its nodes (in `nodes`, or in
    /// `edges` as each edge's `node`), `pageInfo` and, when the server counts them,
    /// `totalCount` — paged by ``Paging/Settings/relay(size:cursorVariable:sizeVariable:)``.
    ///
    /// ```swift
    /// struct Repository: Decodable, Sendable { var name: String }
    /// let repositories = PagedAPIManager(
    ///     Endpoint<Paging.Connection<Repository>>.graphQLQuery("""
    ///         query($owner: String!, $first: Int!, $after: String) {
    ///           repositoryOwner(login: $owner) {
    ///             repositories(first: $first, after: $after) { nodes { name } pageInfo { hasNextPage endCursor } }
    ///           }
    ///         }
    ///         """, connectionAt: "repositoryOwner.repositories", service: "github"),
    ///     paging: .relay(size: 100))
    /// for try await page in repositories.pages(["owner": "apple"]) { print(page.content.nodes.map(\.name)) }
    /// ```
    public struct Connection<Node: Decodable & Sendable>: Decodable, Sendable, Paging.PageContent {
        /// The page's nodes, in order.
        public var nodes: [Node]
        /// Where the page stands in the connection.
        public var pageInfo: PageInfo
        /// How many nodes the whole connection holds, when the server counts them.
        public var totalCount: Int?

        /// A connection's `pageInfo`: whether more follow, and the cursor they follow.
        public struct PageInfo: Decodable, Sendable, Hashable {
            /// Whether another page follows: what ends a listing (the last page's
            /// ``endCursor`` is not `null`).
            public var hasNextPage: Bool
            /// The cursor of the page's last edge, which the next page is asked for after;
            /// `nil` for an empty page.
            public var endCursor: String?

            /// A page's info.
            public init(hasNextPage: Bool, endCursor: String?) {
                self.hasNextPage = hasNextPage
                self.endCursor = endCursor
            }
        }

        /// A page of a connection.
        public init(nodes: [Node], pageInfo: PageInfo, totalCount: Int? = nil) {
            self.nodes = nodes
            self.pageInfo = pageInfo
            self.totalCount = totalCount
        }

        private enum CodingKeys: String, CodingKey {
            case nodes, edges, pageInfo, totalCount
        }

        private struct Edge: Decodable {
            var node: Node
        }

        /// Reads `nodes`, or each of `edges`' `node`; `pageInfo`; `totalCount` if there.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let nodes = try container.decodeIfPresent([Node].self, forKey: .nodes) {
                self.nodes = nodes
            } else {
                nodes = try container.decode([Edge].self, forKey: .edges).map(\.node)
            }
            pageInfo = try container.decode(PageInfo.self, forKey: .pageInfo)
            totalCount = try container.decodeIfPresent(Int.self, forKey: .totalCount)
        }

        /// The number of nodes.
        public var pageItemCount: Int { nodes.count }
        /// `pageInfo.hasNextPage`.
        public var pageHasMore: Bool? { pageInfo.hasNextPage }
        /// `pageInfo.endCursor`.
        public var pageNextCursor: String? { pageInfo.endCursor }
        /// `totalCount`.
        public var pageTotalCount: Int? { totalCount }
    }
}

extension Paging.Settings {
    /// A GraphQL connection paged as Relay's specification says: the page size in the `first`
    /// variable, each page after the previous one's `pageInfo.endCursor` in `after` (none for
    /// the first), and the listing ended by `pageInfo.hasNextPage` — not by an `endCursor` that
    /// is missing, which the last page still has. For a ``Paging/Connection``, or any page whose
    /// ``Paging/PageContent/pageHasMore`` and ``Paging/PageContent/pageNextCursor`` read
    /// `pageInfo`.
    ///
    /// - Parameters:
    ///   - size: Nodes a page; 50 by default.
    ///   - cursorVariable: The variable the cursor goes in; `after` by default.
    ///   - sizeVariable: The variable the size goes in; `first` by default.
    /// - Returns: The settings.
    public static func relay(size: Int = 50, cursorVariable: String = "after", sizeVariable: String = "first") -> Paging.Settings {
        Paging.Settings(style: .cursor(parameter: cursorVariable), size: size, sizeParameter: sizeVariable, endOfList: .hasMoreFlag)
    }
}
