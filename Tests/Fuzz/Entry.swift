// `aif-fuzz`: the library's parsers under arbitrary bytes (`FuzzTargets.swift`).
//
// Built for libFuzzer (`make fuzz`: `-sanitize=fuzzer,address -DFUZZING`), it fuzzes the target
// `AIF_FUZZ_TARGET` names, its arguments libFuzzer's own (corpus folders, `-max_total_time` …).
// Built plainly, it is a replay tool: `aif-fuzz TARGET FILE…` runs each file through the target
// once — how the tests replay the seed corpus and every input a fuzzer has found a fault with
// (`Tests/Fuzz/Corpus/TARGET/`).
import Foundation
import FuzzSupport

#if FUZZING
/// The target `AIF_FUZZ_TARGET` names, read once.
private let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["AIF_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        FileHandle.standardError.write(Data("AIF_FUZZ_TARGET must be one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer's entry point: one input through the target.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzTarget.run(UnsafeRawBufferPointer(start: count > 0 ? data : nil, count: count))
    return 0
}
#endif

@main
struct FuzzTool {
    static func main() {
        #if FUZZING
        // SwiftPM links every executable's own `main`, which hands over to libFuzzer's driver.
        let arguments = CommandLine.arguments
        let strings = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 1)
        for (index, argument) in arguments.enumerated() { strings[index] = strdup(argument) }
        strings[arguments.count] = nil
        var argc = CInt(arguments.count)
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = strings
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print("usage: aif-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE…")
            exit(2)
        }
        var replayed = 0
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("error: cannot read \(path)")
                exit(1)
            }
            data.withUnsafeBytes { target.run($0) }
            replayed += 1
        }
        print("replayed \(replayed) inputs through \(name)")
        #endif
    }
}
