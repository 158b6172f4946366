import Foundation

/// Which copy of the demo hub a server is: production, or a smaller staging copy.
public enum HubEnvironment: String, Sendable, CaseIterable {
    /// The full repository: 45 issues.
    case production
    /// A staging copy: 5 issues, another description.
    case staging
}

/// A repository as the demo hub stores it and writes it (snake_case, ISO 8601 dates).
struct HubRepository: Encodable, Sendable {
    var id: Int
    var fullName: String
    var description: String
    var stargazersCount: Int
    var openIssuesCount: Int
    var pushedAt: Date
}

/// An issue as the demo hub stores it and writes it.
struct HubIssue: Encodable, Sendable {
    struct Label: Encodable, Sendable {
        var name: String
    }

    struct User: Encodable, Sendable {
        var login: String
    }

    var number: Int
    var title: String
    var body: String?
    var state: String
    var labels: [Label]
    var user: User
    var createdAt: Date
}

/// A new issue as the hub reads it from a `POST`.
struct HubIssueDraft: Decodable, Sendable {
    var title: String?
    var body: String?
    var labels: [String]?
}

/// The hub's error body, as GitHub writes one: a message, the field errors of a 422, a link.
struct HubErrorBody: Encodable, Sendable {
    struct FieldError: Encodable, Sendable {
        var resource: String
        var field: String
        var code: String
    }

    var message: String
    var errors: [FieldError]?
    var documentationUrl: String
}

/// A page of search results: GitHub's wrapped form, beside the listing's bare arrays.
struct HubSearchResult: Encodable, Sendable {
    var totalCount: Int
    var incompleteResults: Bool
    var items: [HubIssue]
}
