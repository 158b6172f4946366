import Foundation

// The hub's JSON as the sample reads it: plain Codable values, snake_case and ISO 8601 dates
// left to the service's decoder and encoder.

/// A repository.
struct Repository: Decodable, Sendable {
    var fullName: String
    var description: String
    var stargazersCount: Int
    var openIssuesCount: Int
    var pushedAt: Date
}

/// An issue.
struct Issue: Decodable, Sendable {
    struct Label: Decodable, Sendable {
        var name: String
    }

    var number: Int
    var title: String
    var labels: [Label]
    var createdAt: Date
}

/// An issue to open.
struct IssueDraft: Encodable, Sendable {
    var title: String
    var body: String?
    var labels: [String] = []
}

/// The hub's error body: its message, and for a 422 which fields were refused.
struct HubError: Decodable, Sendable {
    struct FieldError: Decodable, Sendable {
        var resource: String
        var field: String
        var code: String
    }

    var message: String
    var errors: [FieldError]?
    var documentationUrl: String?
}

/// A page of search results.
struct SearchResult: Decodable, Sendable {
    var totalCount: Int
    var items: [Issue]
}

/// One contributor's weekly statistics.
struct ContributorStats: Decodable, Sendable {
    var total: Int
}
