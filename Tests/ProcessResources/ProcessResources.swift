// What the programs and tests that put thousands of connections through one process need to
// know of it: its open descriptors, its resident memory, and a descriptor limit to match.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How many descriptors this process has open.
public func openDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// This process's resident memory in MiB, from `/proc/self/statm`.
public func residentMiB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// Lifts this process's open-file limit to its hard limit: thousands of connections need
/// thousands of descriptors, and the usual soft limit is 1,024.
public func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
