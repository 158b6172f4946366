import AIFNetworking
import AIFNetworkingTesting
import DemoServer
import Foundation

/// The hub sample: a client for a GitHub-like API (the demo hub, started here on loopback,
/// production and staging), one chapter per thing such a client does. The SDK is told about the
/// hub in `HubAPI.swift`; `IssuesScreen.swift` is the delegate face from a main-actor screen.
@main
struct HubSample {
    static func main() async throws {
        let production = try await DemoHubServer.start(environment: .production)
        let staging = try await DemoHubServer.start(environment: .staging)
        Hub.register(production: production.baseURL(), staging: staging.baseURL(), token: HubRoutes.token)
        print("Demo hub: production at \(production.baseURL()), staging at \(staging.baseURL())\n")

        try await showTheRepositoryTwice()
        try await listEveryIssue()
        await showAScreenOfBugs()
        try await openAnIssue()
        await openAnIssueWithoutATitle()
        try await searchTwiceWithinTheRateLimit()
        await askForAForbiddenRepository()
        try await switchToStaging()
        await cancelASlowCall()

        await staging.stop()
        await production.stop()
    }

    /// The second load asks with `If-None-Match` and the hub answers 304: the stored body again.
    static func showTheRepositoryTwice() async throws {
        print("== The repository, twice (ETag) ==")
        let repository = APIManager(.repository)
        for _ in 0..<2 {
            let response = try await repository.load(cups)
            print("   \(response.content.fullName): \(response.content.openIssuesCount) open issues, ★ \(response.content.stargazersCount), from \(response.origin)")
        }
        print()
    }

    /// 50 asked a page, 30 given: `Link` says where the next page is, and the list ends when
    /// no `next` link comes — not at the first page shorter than 50.
    static func listEveryIssue() async throws {
        print("== Every open issue, paged by Link ==")
        var issues: [Issue] = []
        var requests = 0
        for try await page in PagedAPIManager(.issues, paging: .hub).pages(cups) {
            issues += page.content
            requests += 1
        }
        let numbers = Set(issues.map(\.number))
        print("   \(issues.count) issues (\(numbers.count) distinct, #\(numbers.max() ?? 0) to #\(numbers.min() ?? 0)) in \(requests) requests\n")
    }

    /// The delegate face: a main-actor screen pages with its own filter (`labels=bug,question`).
    @MainActor
    static func showAScreenOfBugs() async {
        print("== A screen of issues labelled bug and question (delegate face, main actor) ==")
        let screen = IssuesScreen(labels: ["bug", "question"])
        await screen.open()
        if let failure = screen.failure { print("   failed: \(failure)") }
        print("   \(screen.rows.count) issues in \(screen.list.pagingState.loadedPages) pages of 5: \(screen.rows.prefix(2).joined(separator: "; ")) …\n")
    }

    /// A POST with an `Encodable` body, then the repository: its ETag changed, so a 200.
    static func openAnIssue() async throws {
        print("== Opening an issue from an Encodable value ==")
        let draft = IssueDraft(title: "Saucer does not fit the cup", body: "The 8 oz cup rocks on its saucer.", labels: ["bug"])
        let created = try await APIManager(.openIssue).load(cups, body: draft)
        print("   POST → \(created.statusCode): #\(created.content.number) \(created.content.title) [\(created.content.labels.map(\.name).joined(separator: ", "))]")
        let repository = try await APIManager(.repository).load(cups)
        print("   the repository again: \(repository.content.openIssuesCount) open issues, from \(repository.origin)\n")
    }

    /// A 422: the error's message is the hub's, and its body is there as a `HubError`.
    static func openAnIssueWithoutATitle() async {
        print("== A validation error (422) ==")
        do {
            _ = try await APIManager(.openIssue).load(cups, body: IssueDraft(title: " "))
            print("   unexpectedly accepted")
        } catch {
            let refused = error.errorBody(as: HubError.self)?.errors?.map { "\($0.field) is \($0.code)" } ?? []
            print("   \(error.message)\n   refused: \(refused.joined(separator: ", ")); server message: \(error.serverMessage ?? "none")\n")
        }
    }

    /// The second search within a second is refused with a 403 and `Retry-After: 1`; the load
    /// waits a second and is answered, one load and two attempts.
    static func searchTwiceWithinTheRateLimit() async throws {
        print("== A rate limit (403 with Retry-After) ==")
        let search = APIManager(.searchIssues)
        for word in ["cup", "glaze"] {
            let started = ContinuousClock.now
            let result = try await search.load(["q": .string(word)])
            let waited = (ContinuousClock.now - started).formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow))
            let attempts = result.attempts == 1 ? "1 attempt" : "\(result.attempts) attempts (the 403's Retry-After waited out)"
            print("   \"\(word)\": \(result.content.totalCount) issues, \(attempts), \(waited)")
        }
        print()
    }

    /// A 403 that does not say when is a refusal: delivered at once, not retried.
    static func askForAForbiddenRepository() async {
        print("== A refusal (403 without Retry-After) ==")
        do {
            _ = try await APIManager(.repository).load(["owner": "acme", "repo": "secret"])
        } catch {
            print("   \(error.kind), \(error.attempts) attempt, at once: \(error.message)\n")
        }
    }

    /// One call moves every hub load to staging, and one back.
    static func switchToStaging() async throws {
        print("== Staging ==")
        ServiceRegistry.shared.setEnvironment("staging", for: .hub)
        let staged = try await APIManager(.repository).load(cups).content
        print("   \(staged.description): \(staged.openIssuesCount) open issues")
        ServiceRegistry.shared.setEnvironment(nil, for: .hub)
        let produced = try await APIManager(.repository).load(cups).content
        print("   back on production: \(produced.description), \(produced.openIssuesCount) open issues\n")
    }

    /// Statistics take the hub three seconds; the task asking for them is cancelled after 0.2 s,
    /// and the load ends then, as a cancellation.
    static func cancelASlowCall() async {
        print("== A slow call, cancelled ==")
        let started = ContinuousClock.now
        let task = Task { try await APIManager(.contributorStats).load(cups) }
        try? await Task.sleep(for: .milliseconds(200))
        task.cancel()
        switch await task.result {
        case .success: print("   answered before the cancellation")
        case .failure(let error):
            let waited = (ContinuousClock.now - started).formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow))
            print("   \((error as? APIError)?.kind.description ?? "\(error)") after \(waited)")
        }
    }
}
