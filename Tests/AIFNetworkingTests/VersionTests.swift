import AIFTransport
import Foundation
import Testing

/// The version has one home, `aifNetworkingVersion`: the changelog's newest section, the
/// `User-Agent` and the documentation agree with it.
@Suite("The version's one home")
struct VersionTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theChangelogsNewestSectionIsTheVersion() throws {
        let changelog = try String(contentsOf: Self.repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let heading = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") }, "CHANGELOG.md has no section")
        let words = heading.dropFirst(3).split(separator: " ")
        let version = try #require(words.first.map(String.init))
        let inPreparation = heading.contains("(in preparation)")
        // A version being prepared is `X.Y.Z-dev` in the code, and its section says so.
        #expect(aifNetworkingVersion == (inPreparation ? version + "-dev" : version), "CHANGELOG.md: \(heading)")
        #expect(version.split(separator: ".").count == 3 && version.split(separator: ".").allSatisfy { Int($0) != nil }, "not a semantic version: \(version)")
    }

    @Test func theUserAgentNamesTheMajorAndMinorVersion() {
        let parts = aifNetworkingVersion.split(separator: "-")[0].split(separator: ".")
        #expect(CurlTransport.Configuration.defaultUserAgent == "AIFNetworking/\(parts[0]).\(parts[1]) libcurl")
        #expect(CurlTransport.Configuration(proxy: .none).defaultHeaders["User-Agent"] == CurlTransport.Configuration.defaultUserAgent)
    }

    /// Every "AIFNetworking X.Y.Z" the articles and the README show (the output of `aif doctor`)
    /// is this version.
    @Test func theDocumentationShowsThisVersion() throws {
        let pattern = try Regex(#"AIFNetworking (\d+\.\d+\.\d+(-dev)?)"#)
        var documents = [Self.repository.appendingPathComponent("README.md")]
        let sources = Self.repository.appendingPathComponent("Sources")
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let url as URL in enumerator where url.pathExtension == "md" { documents.append(url) }
        var shown = 0
        for document in documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            for match in text.matches(of: pattern) {
                shown += 1
                #expect(match.output[1].substring.map(String.init) == aifNetworkingVersion, "\(document.lastPathComponent): \(text[match.range])")
            }
        }
        #expect(shown > 0, "no document shows the version: the check would prove nothing")
    }
}
