@testable import TestSupport
import Foundation
import Testing

/// Every input of the fuzzers' seed corpus (`Tests/Fuzz/Corpus`), through the same parsers, in
/// the plain `aif-fuzz` replay program: the inputs a fuzzer once found a fault with stay fixed.
@Suite("Fuzz corpus: every input parsed without a fault")
struct FuzzCorpusTests {
    private static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appending(path: "Fuzz/Corpus")

    @Test(arguments: ["json", "config", "headers", "envelope", "defines", "yaml-defines"])
    func theCorpusReplays(target: String) async throws {
        let folder = Self.corpus.appending(path: target)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { folder.appending(path: $0).path }
        #expect(files.count >= 3)
        let program = URL(fileURLWithPath: helperPath).deletingLastPathComponent().appending(path: "aif-fuzz").path
        let run = try await Shell.run(program, [target] + files)
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        #expect(run.standardOutput.contains("replayed \(files.count) inputs through \(target)"))
    }
}
