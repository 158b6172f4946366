@testable import TestSupport
import Foundation
import Testing

/// The tests' own support: a program a test runs cannot hold the suite past its deadline.
@Suite("Test support: programs run with a deadline")
struct TestSupportTests {
    @Test func aProgramStillRunningAtItsDeadlineIsKilledAndWhatItPrintedShown() async throws {
        let started = ContinuousClock.now
        let overrun = await #expect(throws: Shell.Overrun.self) {
            try await Shell.run("/bin/sh", ["-c", "echo waiting; exec sleep 60"], seconds: 1)
        }
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(overrun?.standardOutput == "waiting\n")
        #expect(overrun?.description.contains("had not exited after 1 s") == true)
    }

    @Test func aProgramThatExitsInTimeIsAnsweredAsItExited() async throws {
        let run = try await Shell.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], seconds: 60)
        #expect(run.status == 3)
        #expect(run.standardOutput == "out\n")
        #expect(run.standardError == "err\n")
    }
}
