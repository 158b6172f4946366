import AIFNetworking
import AIFNetworkingYAML
import Foundation

/// How long a registry takes to load 1,000 API defines (ten groups of a hundred, each group with
/// a DEFAULT, every define with headers, parameters and a cache), from JSON and from YAML:
/// medians of 15 loads into a fresh registry, the files read from disk each time. Prints the
/// `CONFIG` line (target: under 50 ms).
struct ConfigBench {
    var groups = 10
    var definesPerGroup = 100
    var runs = 15

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "aif-bench-config-\(getpid())", directoryHint: .isDirectory)
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appending(path: "bench.apis.json")
        let yaml = folder.appending(path: "bench.apis.yaml")
        try Data(jsonText().utf8).write(to: json)
        try Data(yamlText().utf8).write(to: yaml)

        let count = groups * definesPerGroup
        let fromJSON = try median(load(json, expecting: count))
        let fromYAML = try median(load(yaml, expecting: count))
        print(String(format: "CONFIG defines=%d json=%.1f ms yaml=%.1f ms (medians of %d loads into a fresh registry; target < 50 ms)", count, fromJSON, fromYAML, runs))
    }

    /// Milliseconds of each load of `file`.
    private func load(_ file: URL, expecting count: Int) throws -> [Double] {
        var times: [Double] = []
        for _ in 0..<runs {
            let registry = ServiceRegistry(processEnvironment: [:])
            registry.register(BenchService())
            let start = ContinuousClock.now
            let names = try registry.registerAPIs(from: [file], environment: [:], formats: [YAMLDefineFormat()])
            let elapsed = ContinuousClock.now - start
            guard names.count == count else { fatalError("\(file.lastPathComponent): \(names.count) defines, not \(count)") }
            times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        }
        return times
    }

    private func jsonText() -> String {
        var groupsText: [String] = []
        for group in 0..<groups {
            var members = [#""DEFAULT": {"pathPrefix": "area\#(group)", "headers": {"X-Area": "\#(group)"}, "timeoutSeconds": 20}"#]
            for index in 0..<definesPerGroup {
                members.append(#"""
                    "item\#(index)": {"path": "items\#(index)/{id}", "method": "\#(index % 4 == 0 ? "POST" : "GET")", "parameters": {"page_size": \#(index), "lang": "en"}, "cache": {"lifetimeSeconds": 60}, "response": {"dataField": "data", "shape": "object"}, "summary": "Item \#(index) of area \#(group)"}
                    """#)
            }
            groupsText.append(#""@area\#(group)": {"# + members.joined(separator: ",\n") + "}")
        }
        return #"{"DEFAULT": {"service": "bench", "headers": {"Accept": "application/json"}},"# + groupsText.joined(separator: ",\n") + "}"
    }

    private func yamlText() -> String {
        var lines = ["DEFAULT:", "  service: bench", "  headers: {Accept: application/json}"]
        for group in 0..<groups {
            lines += ["\"@area\(group)\":", "  DEFAULT:", "    pathPrefix: area\(group)", "    headers: {X-Area: \"\(group)\"}", "    timeoutSeconds: 20"]
            for index in 0..<definesPerGroup {
                lines += [
                    "  item\(index):", "    path: items\(index)/{id}", "    method: \(index % 4 == 0 ? "POST" : "GET")",
                    "    parameters: {page_size: \(index), lang: en}", "    cache: {lifetimeSeconds: 60}", "    response: {dataField: data, shape: object}",
                    "    summary: Item \(index) of area \(group)",
                ]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The service the benchmark's defines call.
private struct BenchService: Service {
    let name: ServiceName = "bench"
    let environments: [ServiceEnvironment.Name: ServiceEnvironment] = [.online: ServiceEnvironment(baseURL: URL(string: "http://127.0.0.1:9")!)]
}
