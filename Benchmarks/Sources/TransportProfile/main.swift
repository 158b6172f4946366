import AIFNetworking
import CurlLoop
import Dispatch
import Foundation

// A synchronous driver for instruction-level profiling: valgrind cannot follow Swift's async
// `main` on this platform, so this runs a fixed number of requests without one.
//
//     valgrind --tool=callgrind TransportProfile transport|libcurl-c URL CONCURRENCY REQUESTS
//
// Divide the instruction total by REQUESTS (after subtracting a run with a small REQUESTS, to
// remove start-up) for instructions per request.

let arguments = CommandLine.arguments
guard arguments.count == 5, let concurrency = Int(arguments[3]), let total = Int(arguments[4]) else {
    print("usage: TransportProfile transport|libcurl-c URL CONCURRENCY REQUESTS")
    exit(2)
}
let url = arguments[2]

switch arguments[1] {
case "libcurl-c":
    guard let loop = aif_bench_curl_loop_create(url, nil, Int32(concurrency), 0) else { exit(1) }
    var failures = 0
    var completed = 0
    // The C loop runs by time; run it in short slices until the count is reached.
    while completed < total {
        completed += aif_bench_curl_loop_run(loop, 0.05, &failures)
    }
    aif_bench_curl_loop_destroy(loop)
    print("completed \(completed)")
case "transport":
    var configuration = CurlTransport.Configuration(proxy: .none)
    configuration.httpVersion = .http1Only
    if ProcessInfo.processInfo.environment["PROFILE_BARE"] != nil {
        // For finding what the features cost: no default headers, no Accept-Encoding.
        configuration.defaultHeaders = [:]
        configuration.decompression = .disabled
    }
    let transport = CurlTransport(configuration: configuration)
    let request = HTTPRequest(url: URL(string: url)!)
    let done = DispatchSemaphore(value: 0)
    final class Counter: @unchecked Sendable {
        // Touched only on the transport's thread (completion handlers), after the first sends.
        var started = 0
        var finished = 0
    }
    let counter = Counter()
    @Sendable func send() {
        transport.send(request) { _ in
            counter.finished += 1
            if counter.started < total {
                counter.started += 1
                send()
            } else if counter.finished == total {
                done.signal()
            }
        }
    }
    // The first sends come from this thread; completions cannot run before the loop sees them,
    // and the counter is only read on the loop after that.
    counter.started = concurrency
    for _ in 0..<concurrency { send() }
    done.wait()
    transport.shutdown()
    print("completed \(counter.finished)")
default:
    print("unknown client \(arguments[1])")
    exit(2)
}
