@testable import ExternalAdapters
import Foundation
import Testing

@Suite("PluginSupervisor", .offCooperativePool)
struct PluginSupervisorTests {
    @Test("Back-off doubles from 1 s and stops at 5 min")
    func delays() {
        let policy = RestartPolicy()
        #expect((0...11).map(policy.delay(afterFailures:)) == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
        #expect(policy.delay(afterFailures: 1000) == 300)
    }

    @Test("The state says when the next attempt is; a long healthy run or done resets the count")
    func stateAndReset() throws {
        let clock = ManualClock()
        let supervisor = PluginSupervisor(adapterID: "acme", clock: clock)
        #expect(supervisor.state == .ok)
        let start = clock.now()

        #expect(supervisor.processEnded(startedAt: start, outcome: .failed(reason: "crashed with signal 6 (SIGABRT)")) == 1)
        #expect(supervisor.state == .restarting(nextAttempt: start.addingTimeInterval(1), reason: "crashed with signal 6 (SIGABRT)"))
        #expect(supervisor.processEnded(startedAt: start, outcome: .failed(reason: "exited with status 1")) == 2)
        #expect(supervisor.processEnded(startedAt: start, outcome: .failed(reason: "exited with status 1")) == 4)
        #expect(supervisor.nextPermittedStart == start.addingTimeInterval(4))

        // A failure after a run of a minute or more starts the back-off over.
        clock.sleep(until: start.addingTimeInterval(100), wakeUp: WakeUpSignal())
        #expect(supervisor.processEnded(startedAt: start.addingTimeInterval(30), outcome: .failed(reason: "x")) == 1)

        #expect(supervisor.processEnded(startedAt: clock.now(), outcome: .finished) == 0)
        #expect(supervisor.state == .ok)
        #expect(supervisor.chosenDelays == [1, 2, 4, 1])
        #expect(supervisor.statistics.failures == 4)
    }

    @Test("States print as 'ingestd adapters' shows them")
    func descriptions() {
        #expect(ExternalAdapterState.ok.description == "ok")
        #expect(ExternalAdapterState.broken(reason: "--describe did not finish within 5 s (killed)").description
                == "broken: --describe did not finish within 5 s (killed)")
        #expect(ExternalAdapterState.restarting(nextAttempt: Date(timeIntervalSince1970: 1_800_000_000), reason: "exited with status 1").description
                == "restarting: next attempt 2027-01-15T08:00:00Z (exited with status 1)")
    }

    @Test("A wake-up ends a sleep on the system clock early")
    func wakeUp() {
        let signal = WakeUpSignal()
        let thread = Thread {
            Thread.sleep(forTimeInterval: 0.05)
            signal.fire()
        }
        thread.start()
        #expect(signal.wait(until: Date().addingTimeInterval(600)))
    }
}
