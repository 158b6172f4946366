@_spi(Performance) @testable import AIFNetworking
@testable import AIFServices
@testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("ProcessorBudget: the processors the process can use, and where loads run")
struct ProcessorBudgetTests {
    // MARK: Affinity

    @Test func countsTheProcessorsAProcessStartedUnderTasksetMayUse() throws {
        // A real process pinned to one CPU by taskset (util-linux): its affinity mask, read
        // from outside, allows exactly one.
        // taskset sets the mask, then executes the shell in the same process, which says so
        // before it becomes `sleep`: its line on the pipe is the moment to read the mask.
        let child = Process()
        let said = Pipe()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        child.arguments = ["-c", "0", "/bin/sh", "-c", "echo ready; exec /bin/sleep 30"]
        child.standardOutput = said
        try child.run()
        defer {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        let line = String(decoding: said.fileHandleForReading.availableData, as: UTF8.self)
        #expect(line.hasPrefix("ready"))
        #expect(ProcessorBudget.affinityCount(of: child.processIdentifier) == 1)
    }

    @Test func ownAffinityIsBetweenOneAndTheOnlineProcessors() throws {
        let count = try #require(ProcessorBudget.affinityCount(of: getpid()))
        #expect(count >= 1)
        #expect(ProcessorBudget.current >= 1)
        #expect(ProcessorBudget.current <= ProcessInfo.processInfo.activeProcessorCount)
    }

    @Test func aProcessThatDoesNotExistHasNoAffinity() {
        // PIDs never go this high on Linux (the maximum is 2^22).
        #expect(ProcessorBudget.affinityCount(of: 0x7FFF_FFF0) == nil)
    }

    // MARK: Quotas

    @Test(arguments: [
        ("max 100000", nil), ("max", nil), ("150000 100000", 1.5), ("50000 100000\n", 0.5),
        ("200000 100000", 2.0), ("-5 100000", nil), ("garbage", nil), ("", nil), ("100000 0", nil),
    ] as [(String, Double?)])
    func readsVersion2Limits(_ text: String, _ processors: Double?) {
        #expect(ProcessorBudget.parseVersion2Limit(text) == processors)
    }

    @Test func theTightestQuotaFromTheGroupUpToTheVisibleRootWins() {
        // cgroup v2: the process's leaf has no limit, its parent 1.5 CPUs, the top 4.
        let files = [
            "/proc/self/cgroup": "0::/services/api/worker\n",
            "/proc/self/mountinfo": """
                22 1 0:21 / /proc rw,nosuid - proc proc rw
                30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate
                """,
            "/sys/fs/cgroup/services/api/worker/cpu.max": "max 100000\n",
            "/sys/fs/cgroup/services/api/cpu.max": "150000 100000\n",
            "/sys/fs/cgroup/services/cpu.max": "400000 100000\n",
        ]
        #expect(ProcessorBudget.cgroupQuota(reading: { files[$0] }) == 1.5)
    }

    @Test func aContainerSeesItsGroupAtTheMountRoot() {
        // Inside a container the mount shows the container's group as its root; the process's
        // path in /proc/self/cgroup still carries the host's prefix.
        let files = [
            "/proc/self/cgroup": "0::/docker/4f2a\n",
            "/proc/self/mountinfo": "41 33 0:30 /docker/4f2a /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n",
            "/sys/fs/cgroup/cpu.max": "100000 100000\n",
        ]
        #expect(ProcessorBudget.cgroupQuota(reading: { files[$0] }) == 1.0)
    }

    @Test func version1CPUHierarchyOnAHybridSystem() {
        let files = [
            "/proc/self/cgroup": "12:memory:/batch\n4:cpu,cpuacct:/batch/job\n0::/batch/job\n",
            "/proc/self/mountinfo": """
                35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
                36 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct
                37 25 0:32 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
                """,
            "/sys/fs/cgroup/cpu,cpuacct/batch/job/cpu.cfs_quota_us": "-1\n",
            "/sys/fs/cgroup/cpu,cpuacct/batch/job/cpu.cfs_period_us": "100000\n",
            "/sys/fs/cgroup/cpu,cpuacct/batch/cpu.cfs_quota_us": "250000\n",
            "/sys/fs/cgroup/cpu,cpuacct/batch/cpu.cfs_period_us": "100000\n",
        ]
        #expect(ProcessorBudget.cgroupQuota(reading: { files[$0] }) == 2.5)
    }

    @Test func mountPointsWithEscapedSpaces() {
        let files = [
            "/proc/self/cgroup": "0::/a\n",
            "/proc/self/mountinfo": "30 22 0:26 / /mnt/cgroup\\040two rw - cgroup2 cgroup2 rw\n",
            "/mnt/cgroup two/a/cpu.max": "300000 100000",
        ]
        #expect(ProcessorBudget.cgroupQuota(reading: { files[$0] }) == 3.0)
    }

    @Test func noQuotaWhenUnlimitedUnreadableOrMalformed() {
        let unlimited = [
            "/proc/self/cgroup": "0::/\n",
            "/proc/self/mountinfo": "30 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            "/sys/fs/cgroup/cpu.max": "max 100000\n",
        ]
        #expect(ProcessorBudget.cgroupQuota(reading: { unlimited[$0] }) == nil)
        #expect(ProcessorBudget.cgroupQuota(reading: { _ in nil }) == nil)
        let malformed = [
            "/proc/self/cgroup": "nonsense\n::\n",
            "/proc/self/mountinfo": "not a mount line\n30 22 0:26 / /x rw cgroup2\n",
        ]
        #expect(ProcessorBudget.cgroupQuota(reading: { malformed[$0] }) == nil)
        // A group without a cgroup mount to read it through.
        let unmounted = ["/proc/self/cgroup": "0::/a\n", "/proc/self/mountinfo": "22 1 0:21 / /proc rw - proc proc rw\n"]
        #expect(ProcessorBudget.cgroupQuota(reading: { unmounted[$0] }) == nil)
    }

    @Test(arguments: [
        (8, nil, 8), (8, 2.0, 2), (8, 1.5, 2), (8, 0.5, 1), (1, 4.0, 1), (0, nil, 1), (4, 0.0, 4),
    ] as [(Int, Double?, Int)])
    func theBudgetIsTheAffinityCappedByTheQuotaRoundedUp(_ allowed: Int, _ quota: Double?, _ budget: Int) {
        #expect(ProcessorBudget.budget(allowedProcessors: allowed, quota: quota) == budget)
    }

    // MARK: Placement

    @Test func automaticPlacementRunsDelegateLoadsOnTheTransportThreadOnlyWithOneProcessor() {
        #expect(LoadExecutorChoice.automatic.onTransportThread(processors: 1))
        #expect(!LoadExecutorChoice.automatic.onTransportThread(processors: 2))
        #expect(!LoadExecutorChoice.automatic.onTransportThread(processors: 64))
        for processors in [1, 2] {
            #expect(LoadExecutorChoice.transportThread.onTransportThread(processors: processors))
            #expect(!LoadExecutorChoice.loadExecutor.onTransportThread(processors: processors))
        }
    }

    @Test func aProxyPlacesLoadsWhereAskedAndDecidesByTheBudgetWhenAutomatic() {
        let curl = CurlTransport.shared
        let onThread = APIProxy(transport: curl, loadExecutor: .transportThread)
        #expect(onThread.runsDelegateLoadsOnTransportThread)
        #expect(onThread.loadExecutor === curl.ownThreadExecutor)
        let onExecutor = APIProxy(transport: curl, loadExecutor: .loadExecutor)
        #expect(!onExecutor.runsDelegateLoadsOnTransportThread)
        #expect(onExecutor.loadExecutor === LoadExecutor.shared)
        // Automatic: by the budget.
        let automatic = APIProxy(transport: curl)
        #expect(automatic.runsDelegateLoadsOnTransportThread == (ProcessorBudget.current == 1))
        // Another transport has no thread to offer: the load executor, whatever was asked.
        let other = APIProxy(transport: ForwardingTransport(), loadExecutor: .transportThread)
        #expect(!other.runsDelegateLoadsOnTransportThread)
        #expect(other.loadExecutor === LoadExecutor.shared)
    }
}

/// A transport that is not a ``CurlTransport`` (it forwards to the shared one).
private struct ForwardingTransport: HTTPTransport {
    func send(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        CurlTransport.shared.send(request, progress: progress, completion: completion)
    }
}
