// Built with the package's CommandLineTool trait only (which brings swift-argument-parser).
#if CommandLineTool
import AIFNetworking
#if YAML
import AIFNetworkingYAML
#endif
import ArgumentParser
import Foundation

/// A failure a command reports in words, with the class its exit status tells.
struct CommandFailure: Error, CustomStringConvertible {
    let failureClass: FailureClass
    let description: String

    init(_ failureClass: FailureClass, _ description: String) {
        self.failureClass = failureClass
        self.description = description
    }
}

/// Runs a command's work: an error is printed as `aif: …` on standard error and ends the
/// command with the exit status of its class.
func reportingFailures(_ work: () async throws -> Void) async throws {
    do {
        try await work()
    } catch let exit as ExitCode {
        throw exit
    } catch let failure as CommandFailure {
        printError("aif: \(failure)")
        throw failure.failureClass.exitCode
    } catch let error as APIError {
        printError("aif: \(error)")
        throw FailureClass(error).exitCode
    } catch let error as ValidationError {
        throw error
    } catch {
        // Config files, services and environments: everything before a load is sent.
        printError("aif: \(error)")
        throw FailureClass.configuration.exitCode
    }
}

/// ` (did you mean "x"?)` when one of `candidates` is a likely typo of `word`, then the list of
/// them; empty when there are none.
func suggestion(for word: String, among candidates: [String]) -> String {
    guard !candidates.isEmpty else { return "" }
    let close = candidates
        .map { (candidate: $0, distance: editDistance(word.lowercased(), $0.lowercased())) }
        .filter { $0.distance <= max(1, $0.candidate.count / 3) }
        .min { $0.distance < $1.distance }
    let known = "known: " + candidates.sorted().joined(separator: ", ")
    return close.map { "; did you mean \"\($0.candidate)\"? (\(known))" } ?? " (\(known))"
}

/// The Levenshtein distance between two words.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var previous = Array(0...b.count)
    for (i, x) in a.enumerated() {
        var current = [i + 1]
        for (j, y) in b.enumerated() {
            current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
        }
        previous = current
    }
    return previous[b.count]
}

/// The formats API defines are read in besides JSON: YAML when the package's `YAML` trait is on.
#if YAML
let defineFormats: [any APIDefine.Format] = [YAMLDefineFormat()]
#else
let defineFormats: [any APIDefine.Format] = []
#endif

/// What reads an OpenAPI document: with the `YAML` trait, YAML's reader for YAML and JSON alike
/// (YAML is a superset of JSON), with lines and columns in its errors; without it, JSON's, and
/// a YAML document is refused saying what to do.
func openAPIReader(for file: String) throws -> any APIDefine.Format {
    #if YAML
    return YAMLDefineFormat()
    #else
    guard !file.hasSuffix(".yaml"), !file.hasSuffix(".yml") else {
        throw CommandFailure(.configuration, "\(file) is YAML, which this aif reads only when built with the package's YAML trait (swift build --traits YAML); convert it to JSON, or rebuild")
    }
    return APIDefine.JSONFormat()
    #endif
}

/// The config files `--config` names: the services' (`*.json`) and the API defines'
/// (`*.apis.json`, `*.apis.yaml`), each file as it is, each folder's in name order; `Configs/`
/// when none is named.
struct ConfigFiles {
    var services: [URL] = []
    var defines: [URL] = []
}

/// The names of the services config files define (their `name`), read without their variables:
/// what a define may name. A file that cannot be read adds none.
func serviceNames(in files: [URL]) -> Set<ServiceName> {
    var names: Set<ServiceName> = []
    for file in files {
        guard let data = try? Data(contentsOf: file), case .object(let members)? = try? FastJSONDecoder().decode(JSONValue.self, from: data),
            case .string(let name)? = members["name"]
        else { continue }
        names.insert(ServiceName(rawValue: name))
    }
    return names
}

/// The config files of `paths` (see ``ConfigFiles``).
func configFiles(_ paths: [String]) throws -> ConfigFiles {
    var files = ConfigFiles()
    for path in paths.isEmpty ? ["Configs"] : paths {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure(.configuration, "no config file or folder at \(path)")
        }
        let url = URL(fileURLWithPath: path)
        let found = isDirectory.boolValue
            ? try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "json" || isDefineFile($0) }.sorted { $0.path < $1.path }
            : [url]
        for file in found {
            if isDefineFile(file) { files.defines.append(file) } else { files.services.append(file) }
        }
    }
    return files
}

/// Whether a file is named as API defines are: `*.apis.json`, `*.apis.yaml`, `*.apis.yml`.
private func isDefineFile(_ file: URL) -> Bool {
    [".apis.json", ".apis.yaml", ".apis.yml"].contains { file.lastPathComponent.hasSuffix($0) }
}
#endif
