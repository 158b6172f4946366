@testable import AIFNetworking
@testable import AIFNetworkingYAML
@testable import AIFServices
@testable import TestSupport
import Foundation
import Testing

/// Declarations checked where they are read: what an independent fuzzing campaign over the
/// define files (JSON and YAML) and `aif import openapi` found accepted and then failing at every
/// call, expanded without bound, lost in silence, or refused without a line. Each input is one
/// the campaign reported, or its shortest form.
@Suite("Defines checked where they are read: the fuzzing campaign's findings")
struct DefineCheckingTests {
    private func json(_ text: String, environment: [String: String] = [:]) throws(ServiceRegistry.ConfigurationError) -> [APIDefine] {
        try APIDefineFile.parse(Data(text.utf8), file: "shop.apis.json", environment: environment).map(\.define)
    }

    private func yaml(_ text: String) throws(ServiceRegistry.ConfigurationError) -> [APIDefine] {
        let document = try YAMLDefineFormat().read(Data(text.utf8), file: "shop.apis.yaml")
        return try APIDefineFile.parse(document, file: "shop.apis.yaml", environment: [:]).map(\.define)
    }

    /// Accepted before, then failing at every call: refused as the define is read, at the key's
    /// line and column.
    @Test(arguments: [
        (#"{"a": {"service": "s", "path": "x", "method": "GET/"}}"#, "a.method", 1, 37, "must be a method name"),
        (#"{"a": {"service": "s", "path": "orders/{id"}}"#, "a.path", 1, 24, "opens a placeholder it never closes"),
        (#"{"a": {"service": "s", "path": "goods/{}"}}"#, "a.path", 1, 24, "has an empty placeholder {}"),
        (#"{"a": {"service": "s", "path": "goods/id}"}}"#, "a.path", 1, 24, "closes a placeholder it never opened"),
        ("{\"a\": {\"service\": \"s\", \"path\": \"x\",\n \"headers\": {\"X Key\": \"1\"}}}", "a.headers.X Key", 2, 14, "is not a header name"),
        (#"{"a": {"service": "s", "path": "x", "headers": {"X-Key": "${MISSING}"}}}"#, "a.headers.X-Key", 1, 49, "MISSING, which is not set"),
        (#"{"": {"service": "s", "path": "x"}}"#, #""""#, 1, 2, "a define without a name"),
    ])
    func aJSONDefineThatCouldNotWorkIsRefusedWithItsPlace(text: String, key: String, line: Int, column: Int, problem: String) {
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try json(text) }
        #expect(error?.key == key, "\(String(describing: error))")
        #expect(error?.line == line && error?.column == column, "\(String(describing: error))")
        #expect(error?.problem.contains(problem) == true, "\(String(describing: error))")
    }

    @Test func aYAMLDefaultThatJSONCannotSendIsRefused() {
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try yaml("a:\n  service: s\n  path: x\n  parameters:\n    ratio: .nan\n")
        }
        #expect(error?.key == "a.parameters.ratio")
        #expect(error?.line == 5)
        #expect(error?.problem.contains("must be a finite number") == true, "\(String(describing: error))")
    }

    @Test func aRootThatIsNoObjectIsLocated() {
        for (text, line) in [("\n\n[1, 2]", 3), ("\"text\"", 1)] {
            let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try json(text) }
            #expect(error?.line == line, "\(text): \(String(describing: error))")
            #expect(error?.problem.contains("must be an object of defines") == true)
        }
        let yamlError = #expect(throws: ServiceRegistry.ConfigurationError.self) { try yaml("# defines\n- a\n- b\n") }
        #expect(yamlError?.line == 2, "\(String(describing: yamlError))")
    }

    /// A byte YAML's reader refuses: located by its offset, which Yams kept inside its own text.
    @Test func aByteTheYAMLReaderRefusesIsLocated() {
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try yaml("a:\n  service: s\n  path: \u{01}x\n") }
        #expect(error?.line == 3, "\(String(describing: error))")
        #expect(error?.column == 9, "\(String(describing: error))")
        #expect(error?.problem.contains("is not valid YAML") == true)
    }

    /// `${` in a summary is text when written `$${`.
    @Test func aDollarBraceIsTextWhenDoubled() throws {
        let read = try json(#"{"a": {"service": "s", "path": "x", "summary": "costs $${AMOUNT} in ${CURRENCY}"}}"#, environment: ["CURRENCY": "EUR"])
        #expect(read.first?.summary == "costs ${AMOUNT} in EUR")
    }

    /// A billion laughs: aliases of aliases, 330 bytes that took 56 s and 554 MB to read, refused
    /// at once at the line where they pass the limit.
    @Test func anAliasBombIsRefusedAtOnce() {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            let previous = "*a\(level - 1)"
            text += "a\(level): &a\(level) [\(Array(repeating: previous, count: 10).joined(separator: ", "))]\n"
        }
        text += "bomb:\n  service: s\n  path: x\n  parameters: {all: *a9}\n"
        let started = ContinuousClock.now
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try yaml(text) }
        #expect(ContinuousClock.now - started < .seconds(10), "the reader stops at its limit, not after expanding")
        #expect(error?.problem.contains("expands to more than 100000 values through its aliases") == true, "\(String(describing: error))")
        #expect(error?.line != nil)
        // Aliases within reason read as the values they name.
        let fine = try? yaml("base: &base {service: s, path: x}\nb: *base\n")
        #expect(fine?.map(\.name) == ["b", "base"])
    }

    // MARK: aif import openapi

    private func imported(_ document: String) async throws -> (run: Shell.Run, output: URL, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appending(path: "aif-import-checks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appending(path: "api.json")
        try Data(document.utf8).write(to: file)
        let output = folder.appending(path: "x.apis.json")
        let run = try await Shell.run(AifCommandTests.aifPath, ["import", "openapi", file.path, "--service", "x", "--output", output.path])
        return (run, output, folder)
    }

    /// The importer reads a YAML document with the define reader, and its limit on aliases.
    @Test func anAliasBombOfAnOpenAPIDocumentIsRefused() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "aif-import-bomb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var text = "openapi: 3.1.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 { text += "a\(level): &a\(level) [\(Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", "))]\n" }
        text += "paths: {}\nx-all: *a9\n"
        let file = folder.appending(path: "bomb.yaml")
        try Data(text.utf8).write(to: file)
        let run = try await Shell.run(AifCommandTests.aifPath, ["import", "openapi", file.path, "--service", "x", "--output", folder.appending(path: "x.apis.json").path])
        #expect(run.status == 2)
        #expect(run.standardError.contains("expands to more than 100000 values through its aliases"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "x.apis.json").path))
    }

    /// Three operations whose names meet after the method's suffix: three defines, each told.
    @Test func everyOperationIsDefinedUnderANameOfItsOwn() async throws {
        let document = #"""
            {"openapi": "3.1.0", "paths": {
              "/a": {"get": {"operationId": "x.get"}},
              "/b": {"get": {"operationId": "x"}},
              "/c": {"get": {"operationId": "x"}},
              "/v1/items:batchGet": {"post": {}},
              "/d": {"get": {"operationId": "f d", "summary": "costs ${AMOUNT}"}},
              "/orders/{id": {"get": {"operationId": "broken"}},
              "/e": {"get": {"operationId": "e", "parameters": [{"name": "X Key", "in": "header", "schema": {"const": "1"}}]}}
            }}
            """#
        let (run, output, folder) = try await imported(document)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(run.status == 0, "\(run.standardError)")
        let defines = try APIDefine.defines(in: output, environment: [:])
        #expect(defines.map(\.name) == ["e", "f_d", "post.v1.items_batchGet", "x", "x.get", "x.get2"], "\(run.standardOutput)")
        #expect(defines.first { $0.name == "f_d" }?.summary == "costs ${AMOUNT}")
        #expect(defines.first { $0.name == "e" }?.headers.isEmpty == true)
        #expect(run.standardOutput.contains("its operationId \"f d\" is not a define name: defined as \"f_d\""), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("not defined: the path /orders/{id opens a placeholder it never closes"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("\"X Key\" is not a header name"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("Wrote 6 defines"), "\(run.standardOutput)")
        // Nothing but the output is left in the folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["api.json", "x.apis.json"])
    }
}
