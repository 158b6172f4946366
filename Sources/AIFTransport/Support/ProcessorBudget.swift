import CCurl
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How many processors this process can keep busy at once: the processors its CPU affinity
/// allows, capped by the CPU quota of its control group, rounded up, and at least one.
///
/// `ProcessInfo.activeProcessorCount` counts the machine's online processors only: 2 for a
/// process started with `taskset -c 1` on a two-core machine, or 64 in a container given one
/// CPU of a 64-core host. The library sizes its threads by this budget instead (the load
/// executor's width; whether a proxy hands loads to another thread at all, see
/// ``LoadExecutorChoice/automatic``).
///
/// The quota is read from every group from the process's own up to the top of the hierarchy it
/// can see (a parent's quota binds its children), the smallest wins: cgroup v2's `cpu.max`, or
/// v1's `cpu.cfs_quota_us` over `cpu.cfs_period_us`. The budget is read once, at first use.
package enum ProcessorBudget {
    /// This process's budget.
    package static let current: Int = {
        let online = ProcessInfo.processInfo.activeProcessorCount
        let allowed = affinityCount(of: getpid()) ?? online
        return budget(allowedProcessors: min(allowed, online), quota: cgroupQuota(reading: readSmallFile))
    }()

    /// The budget from the processors allowed and a quota in processors (`nil`: none).
    static func budget(allowedProcessors: Int, quota: Double?) -> Int {
        var count = max(1, allowedProcessors)
        if let quota, quota > 0 {
            count = min(count, Int(quota.rounded(.up)))
        }
        return max(1, count)
    }

    // MARK: Affinity

    /// How many processors process `pid` may run on, or `nil` if the kernel does not say.
    static func affinityCount(of pid: pid_t) -> Int? {
        // 1,024 processors first; larger masks for larger machines (the call fails with EINVAL
        // when the buffer is smaller than the kernel's mask).
        var words = 16
        while words <= 16_384 {
            var mask = [UInt64](repeating: 0, count: words)
            let written = mask.withUnsafeMutableBytes { bytes in
                aif_sched_getaffinity(pid, bytes.count, bytes.baseAddress!)
            }
            if written > 0 {
                let count = mask.reduce(0) { $0 + $1.nonzeroBitCount }
                return count > 0 ? count : nil
            }
            guard errno == EINVAL else { return nil }
            words *= 4
        }
        return nil
    }

    // MARK: Control groups

    /// The tightest CPU quota, in processors, of the process's control group and the groups
    /// above it, or `nil` when none is set or the files cannot be read. `read` returns a file's
    /// contents (`/proc/self/cgroup`, `/proc/self/mountinfo` and the groups' files).
    static func cgroupQuota(reading read: (String) -> String?) -> Double? {
        guard let membership = read("/proc/self/cgroup"), let mounts = read("/proc/self/mountinfo") else { return nil }
        let groups = CgroupMembership(parsing: membership)
        let mountTable = mounts.split(separator: "\n").compactMap(CgroupMount.init(line:))

        // A v1 `cpu` hierarchy, if the process has one (hybrid systems put the CPU controller
        // there), else the unified v2 hierarchy.
        if let path = groups.version1CPU, let mount = mountTable.first(where: \.isVersion1CPU) {
            return tightest(in: mount.directories(containing: path)) { directory in
                guard let quota = read(directory + "/cpu.cfs_quota_us").flatMap(parseNumber), quota > 0,
                      let period = read(directory + "/cpu.cfs_period_us").flatMap(parseNumber), period > 0 else { return nil }
                return quota / period
            }
        }
        if let path = groups.version2, let mount = mountTable.first(where: \.isVersion2) {
            return tightest(in: mount.directories(containing: path)) { directory in
                read(directory + "/cpu.max").flatMap(parseVersion2Limit)
            }
        }
        return nil
    }

    /// A v2 `cpu.max` line as processors: `"150000 100000"` is 1.5; `"max 100000"` is none.
    static func parseVersion2Limit(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard let first = fields.first, first != "max", let quota = Double(first), quota > 0 else { return nil }
        let period = fields.count > 1 ? Double(fields[1]) ?? 0 : 100_000
        return period > 0 ? quota / period : nil
    }

    private static func parseNumber(_ text: String) -> Double? {
        Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private static func tightest(in directories: [String], limit: (String) -> Double?) -> Double? {
        directories.compactMap(limit).min()
    }

    /// A small file's text (its first MiB at most), or `nil` if it cannot be read.
    private static func readSmallFile(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 1 << 20) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The lines of `/proc/self/cgroup` that matter: the group of the v1 hierarchy carrying the
/// `cpu` controller (`4:cpu,cpuacct:/a/b`) and the v2 group (`0::/a/b`).
struct CgroupMembership {
    /// The group in the v1 hierarchy with the `cpu` controller, if there is one.
    var version1CPU: String?
    /// The group in the unified v2 hierarchy, if there is one.
    var version2: String?

    init(parsing text: String) {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                version2 = String(fields[2])
            } else if fields[1].split(separator: ",").contains("cpu") {
                version1CPU = String(fields[2])
            }
        }
    }
}

/// A control-group file system mounted somewhere, from one line of `/proc/self/mountinfo`:
/// `36 25 0:31 /root /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu,cpuacct`.
struct CgroupMount {
    /// The group the mount shows at its mount point (not `/` inside many containers).
    var root: String
    /// Where the mount is in the file system.
    var mountPoint: String
    /// Whether it is the unified (v2) hierarchy.
    var isVersion2: Bool
    /// Whether it is a v1 hierarchy carrying the `cpu` controller.
    var isVersion1CPU: Bool

    init?(line: Substring) {
        let halves = line.components(separatedBy: " - ")
        guard halves.count >= 2 else { return nil }
        let fields = halves[0].split(separator: " ")
        let tail = halves[1].split(separator: " ")
        guard fields.count >= 5, tail.count >= 3 else { return nil }
        let type = tail[0]
        guard type == "cgroup" || type == "cgroup2" else { return nil }
        root = Self.unescape(fields[3])
        mountPoint = Self.unescape(fields[4])
        isVersion2 = type == "cgroup2"
        isVersion1CPU = type == "cgroup" && tail[2].split(separator: ",").contains("cpu")
    }

    /// The directories of group `path` and of every group above it that this mount shows,
    /// innermost first. A group outside the mount's root is seen only through the root.
    func directories(containing path: String) -> [String] {
        let rootParts = root.split(separator: "/")
        var parts = path.split(separator: "/")
        if parts.starts(with: rootParts) {
            parts.removeFirst(rootParts.count)
        } else {
            parts = []
        }
        var directories: [String] = []
        while true {
            directories.append(([mountPoint] + parts.map(String.init)).joined(separator: "/").replacingOccurrences(of: "//", with: "/"))
            guard !parts.isEmpty else { break }
            parts.removeLast()
        }
        return directories
    }

    /// Undoes mountinfo's octal escapes (`\040` for a space).
    private static func unescape(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        var input = Array(field.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "\\"), input.count >= 3,
               let value = UInt8(String(decoding: input.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                input.removeFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
