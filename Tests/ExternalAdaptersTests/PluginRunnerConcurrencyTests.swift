import AdapterKit
import ExternalAdapterProtocol
@testable import ExternalAdapters
import Foundation
import HealthModel
import Synchronization
import TestSupport
import Testing
import Transport

/// The runner's locks under concurrent use: callers submitting, draining, finishing and stopping
/// from several threads while the plugin's output arrives. Each test checks that nothing is lost,
/// nothing is handed out twice, and the order the plugin printed is kept.
@Suite("PluginRunner concurrency", .offCooperativePool)
struct PluginRunnerConcurrencyTests {
    let utc = TimeZone(identifier: "UTC")!
    /// The time of the flood plugin's first sample; one a minute after it.
    let floodBase = Date(timeIntervalSince1970: 1_764_000_000)

    func runner(script: String, id: String, matching traits: BLEDeviceTraits, environment: [String: String] = [:],
                change: (inout ExternalAdapterConfiguration) -> Void = { _ in }) throws -> (ExternalAdapter, PluginRunner, PluginDirectory) {
        let directory = try PluginDirectory()
        let path = try directory.install(script, as: id)
        let adapter = try loadAdapter(path, id: id, configuration: testConfiguration(environment: environment, change: change))
        return (adapter, adapter.makeRunner(for: .ble(traits), timeZone: utc), directory)
    }

    /// A runner of the sample flood (20,000 samples) with an output queue of `capacity`, and no
    /// time limit that could end it: only a stop does.
    func floodRunner(capacity: Int) throws -> (ExternalAdapter, PluginRunner, PluginDirectory) {
        try runner(script: "sample-flood.py", id: "sample-flood", matching: try traits(name: "FLOOD", services: [BLEUUID(0x181D)])) {
            $0.outputQueueCapacity = capacity
            $0.finishTimeout = .seconds(300)
            $0.exitGracePeriod = .seconds(300)
        }
    }

    func traits(name: String, services: Set<BLEUUID> = [], companies: Set<UInt16> = []) throws -> BLEDeviceTraits {
        BLEDeviceTraits(address: try #require(BLEAddress(miScaleAddress)), name: name, serviceUUIDs: services, companyIDs: companies)
    }

    /// Runs `body` on `count` threads at once and waits for all of them.
    func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        return group
    }

    @Test("Advertisements submitted from four threads while finish runs: each is answered, refused, dropped or undelivered, exactly once and in order")
    func submittingWhileFinishing() throws {
        // The crashing plugin, told not to crash: it answers each advertisement in order and says done at the end.
        let (adapter, runner, directory) = try runner(script: "crashy.py", id: "echo", matching: try traits(name: "HR", companies: [0xFFFF]),
                                                      environment: ["CRASH_EVERY": "0"]) {
            $0.inputQueueCapacity = 64
        }
        _ = directory
        runner.start()
        let finished = StopFlag()
        let submitted = Mutex([Int](repeating: 0, count: 4))
        let base = 1_700_000_000.0
        // Thread t submits heart rate 60 + t at base + t * 100_000 + i seconds, until a little after finish returned.
        let submitters = onThreads(4) { thread in
            var afterFinish = 0
            for index in 0..<50_000 {
                guard let advertisement = try? makeAdvertisement(address: miScaleAddress, manufacturer: (0xFFFF, [UInt8(60 + thread)]),
                                                                 time: Date(timeIntervalSince1970: base + Double(thread * 100_000 + index)))
                else { return }
                runner.submit(ExternalInputCodec.encodeAdvertisementLine(advertisement), time: advertisement.time)
                submitted.withLock { $0[thread] += 1 }
                if finished.isSet {
                    afterFinish += 1
                    if afterFinish == 20 { return }
                }
                Thread.sleep(forTimeInterval: 0.0005)
            }
        }
        #expect(eventually { adapter.supervisor.statistics.records >= 200 })
        var output = AdapterOutput()
        runner.finish(into: &output)
        finished.set()
        submitters.wait()
        runner.drain(into: &output)  // the refusals counted after finish returned

        let total = submitted.withLock { $0.reduce(0, +) }
        let answered = samples(output)
        // Refused once the input was closed, or (under another name) once the plugin said done.
        let refused = (output.skipped["plugin-stopped"] ?? 0) + (output.skipped["plugin-done"] ?? 0)
        let dropped = output.skipped["advertisement-dropped"] ?? 0
        let undelivered = output.skipped["advertisement-undelivered"] ?? 0
        #expect(answered.count >= 200)
        #expect(refused >= 4 * 20, "every line offered after finish is refused")
        #expect(Set(output.skipped.keys).isSubset(of: ["plugin-stopped", "plugin-done", "advertisement-dropped", "advertisement-undelivered"]))
        #expect(answered.count + refused + dropped + undelivered == total, "every line accounted for once")
        #expect(Set(answered.map(\.start)).count == answered.count, "no sample handed out twice")
        #expect(dropped == adapter.supervisor.statistics.droppedAdvertisements)
        for thread in 0..<4 {
            let starts = answered.filter { $0.quantity.value == Double(60 + thread) }.map(\.start)
            #expect(starts == starts.sorted(), "thread \(thread)'s lines answered in the order submitted")
            #expect(starts.allSatisfy { Int($0.timeIntervalSince1970 - base) / 100_000 == thread })
        }
        #expect(runner.hasFinished)
        #expect(runner.isDone)
        #expect(adapter.supervisor.statistics.failures == 0)
        #expect(output.rejections.isEmpty)
    }

    @Test("Stopped while two threads drain a flood: the records handed out are the flood's first ones, in order, once each, and all that were counted")
    func stoppingWhileRecordsArrive() throws {
        let (adapter, runner, directory) = try floodRunner(capacity: 32)
        _ = directory
        let drained = Mutex<[(drainer: Int, batch: [Date])]>([])
        let stopped = StopFlag()
        runner.start()
        let drainers = onThreads(2) { drainer in
            while true {
                let ended = runner.hasFinished
                var output = AdapterOutput()
                runner.drain(into: &output)
                let starts = output.records.flatMap(\.samples).map(\.start)
                if !starts.isEmpty { drained.withLock { $0.append((drainer, starts)) } }
                if ended { return }
                // Slower than the plugin, so the reader often waits for room when the stop comes.
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        #expect(eventually { adapter.supervisor.statistics.records >= 500 })
        let stopper = onThreads(1) { _ in
            runner.stop()
            stopped.set()
        }
        stopper.wait()
        #expect(eventually(within: .seconds(10)) { runner.hasFinished }, "the stop ends the runner although its reader waited for room")
        drainers.wait()

        let batches = drained.withLock { $0 }
        let all = batches.flatMap(\.batch).sorted()
        #expect(all.count >= 500)
        #expect(all.count < 20_000, "the stop cut the flood short")
        #expect(all == (0..<all.count).map { floodBase.addingTimeInterval(Double($0) * 60) },
                "the first samples of the flood, each once, none missing")
        for batch in batches.map(\.batch) { #expect(batch == batch.sorted(), "a batch keeps the plugin's order") }
        #expect(all.count == adapter.supervisor.statistics.records, "every record the reader took was handed out")
        #expect(adapter.supervisor.statistics.failures == 0, "a stop is not a failure")

        // After the stop nothing more is taken or produced.
        var after = AdapterOutput()
        runner.submit("{}", time: Date())
        runner.finish(into: &after)
        #expect(after.records.isEmpty)
        #expect(after.skipped == ["plugin-stopped": 1])
        #expect(stopped.isSet)
    }

    @Test("Stop and finish called at once on a reader held by back-pressure: both return, with every record taken, in order")
    func stopRacingFinish() throws {
        let (adapter, runner, directory) = try floodRunner(capacity: 64)
        _ = directory
        runner.start()
        // The queue is full and the reader waits for room, with one more record counted.
        #expect(eventually { adapter.supervisor.statistics.records == 65 })
        Thread.sleep(forTimeInterval: 0.2)
        #expect(adapter.supervisor.statistics.records == 65, "the reader waits while nobody drains")
        #expect(!runner.hasFinished)

        let began = ContinuousClock.now
        let stopper = onThreads(1) { _ in runner.stop() }
        var output = AdapterOutput()
        runner.finish(into: &output)  // drains (which lets the reader go on) while the stop comes
        stopper.wait()
        #expect(ContinuousClock.now - began < .seconds(30), "neither waited for the 300 s finish timeout")
        #expect(runner.hasFinished)
        var rest = AdapterOutput()
        runner.drain(into: &rest)
        #expect(rest.records.isEmpty, "finish handed out everything up to the runner's end")
        let starts = samples(output).map(\.start)
        #expect(starts.count >= 65, "the record the reader held is handed out too")
        #expect(starts.count == adapter.supervisor.statistics.records, "every record the reader took")
        #expect(starts == (0..<starts.count).map { floodBase.addingTimeInterval(Double($0) * 60) }, "in order, once each")
        #expect(output.rejections.isEmpty)
        #expect(adapter.supervisor.statistics.failures == 0)
    }
}
