import ArgumentParser
import CMallocCounter
import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the latency of the fusion step on a recording's updates.",
        discussion: """
        Each recording (and each built-in scenario named with --scenario, simulated in memory) \
        is parsed into memory first (parsing is not timed), every one before any is timed. Its events are then \
        replayed through a fresh engine (the replay's own driver) --passes times after one warm-up pass; \
        UWB updates are timed in blocks of up to 32 consecutive ones of one phase (the poses between them \
        included), so that the clock reads do not dominate; allocations are counted by an \
        interposed malloc (its aligned variants included). Reported: p50/p90/p99 over blocks of the mean latency per update \
        in ns, mallocs per update, and UWB updates per second of fusion time; then the same \
        for the updates made while the object was being acquired (no estimate yet, or the \
        bank refined from its window) and while it was tracked, each block holding updates \
        of one phase only. For the acquiring updates, also the acquisition's work: how many \
        times per update it linearised its whole window of stored updates, and how many \
        window entries those linearisations read, counted in the warm-up pass (the same on \
        every machine).
        """)

    @Argument(help: "Recordings.", completion: .file(extensions: ["jsonl"]))
    var recordings: [String] = []

    @Option(name: .customLong("scenario"), help: "A built-in scenario to time (simulated in memory with --seed), as well as or instead of recordings; repeatable; 'all' for every one.")
    var scenarios: [String] = []

    @Option(help: "The seed of the scenarios simulated.")
    var seed: UInt64 = 1

    @Option(help: "Replays after the warm-up pass.")
    var passes: Int = 20

    @Flag(help: "Print one JSON object per recording or scenario (one line each).")
    var json = false

    @Flag(help: "Print one Markdown table, a row per recording or scenario: the whole session's updates per second, then the acquiring and the tracking updates apart.")
    var table = false

    @OptionGroup var engine: EngineOptions

    /// A negative control for the tests: two heap allocations inside every timed update, one
    /// by `malloc` (a small array) and one by `posix_memalign` (a temporary allocation too
    /// large for the stack), which the counter must both see.
    @Flag(help: .hidden)
    var allocateForTest = false

    /// The figures of a set of timed updates.
    struct Figures: Encodable {
        var p50Nanoseconds: Double
        var p90Nanoseconds: Double
        var p99Nanoseconds: Double
        var mallocsPerUpdate: Double?
        var updatesPerSecond: Double
        var updates: Int
        /// For the acquiring updates: the acquisition's linearisations of its whole window per
        /// update (``ObjectStateSnapshot/windowPasses``), counted in the warm-up pass — its work,
        /// the same on every machine.
        var windowPassesPerUpdate: Double? = nil
        /// For the acquiring updates: the window entries those linearisations read per update
        /// (``ObjectStateSnapshot/windowEntriesLinearised``), counted in the warm-up pass — a
        /// pass over a long window costs more than one over a short one.
        var windowEntriesPerUpdate: Double? = nil
    }

    /// Every update's figures (at the top level of `--json`), and those of the updates made
    /// while the object was acquired and while it was tracked (`nil` when there was none).
    struct Result: Encodable {
        var all: Figures
        var acquiring: Figures?
        var tracking: Figures?

        enum CodingKeys: String, CodingKey { case acquiring, tracking }

        func encode(to encoder: any Encoder) throws {
            try all.encode(to: encoder)
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(acquiring, forKey: .acquiring)
            try c.encodeIfPresent(tracking, forKey: .tracking)
        }
    }

    /// Blocks of one kind of update: their mean ns per update, and the totals.
    struct Blocks {
        var latencies: [Double] = []
        var mallocs: UInt64 = 0
        var total: UInt64 = 0
        var updates = 0

        /// Adds one block: its mean ns per update, its mallocs, ns and updates.
        mutating func add(latency: Double, mallocs blockMallocs: UInt64, nanoseconds: UInt64, updates blockUpdates: Int) {
            latencies.append(latency)
            mallocs += blockMallocs
            total += nanoseconds
            updates += blockUpdates
        }

        func figures(countingMallocs: Bool) -> Figures? {
            guard updates > 0 else { return nil }
            let sorted = latencies.sorted(), n = Double(updates)
            func percentile(_ q: Double) -> Double { Statistics.quantile(sorted: sorted, q) }
            return Figures(p50Nanoseconds: percentile(0.5), p90Nanoseconds: percentile(0.9), p99Nanoseconds: percentile(0.99),
                          mallocsPerUpdate: countingMallocs ? Double(mallocs) / n : nil,
                          updatesPerSecond: n / (Double(max(total, 1)) * 1e-9), updates: updates)
        }
    }

    func validate() throws {
        guard passes >= 1 else { throw ValidationError("--passes must be at least 1") }
        guard !recordings.isEmpty || !scenarios.isEmpty else { throw ValidationError("Give a recording or a --scenario to time.") }
        for name in scenarios where name != "all" && !ScenarioCatalogue.all.contains(where: { $0.name == name }) {
            throw ValidationError("Unknown scenario '\(name)'. Built-in scenarios: \(ScenarioCatalogue.all.map(\.name).joined(separator: ", ")).")
        }
        guard !(json && table) else { throw ValidationError("--json and --table are exclusive") }
    }

    func run() throws {
        // Every input parsed first, so that a bad one fails before anything is timed.
        var inputs: [(name: String, header: RecordingHeader, events: [RecordingEvent])] = []
        func parse(_ reader: inout RecordingReader, name: String) throws {
            do {
                let header = try reader.readHeader()
                var events: [RecordingEvent] = []
                while let e = try reader.next() { events.append(e) }
                guard events.contains(where: { if case .uwb = $0 { return true } else { return false } }) else {
                    throw CommandFailure(message: "\(name): no UWB updates to time")
                }
                inputs.append((name, header, events))
            } catch let error as RecordingError {
                throw CommandFailure(message: error.description)
            }
        }
        for path in recordings {
            var reader: RecordingReader
            do { reader = try RecordingReader(path: path) } catch { throw CommandFailure(message: error.description) }
            try parse(&reader, name: path)
        }
        let named = scenarios.flatMap { $0 == "all" ? ScenarioCatalogue.all.map(\.name) : [$0] }
        for name in named {
            guard let make = ScenarioCatalogue.all.first(where: { $0.name == name })?.make else { continue }
            var reader = RecordingReader(bytes: Array(Simulator.recordingText(for: make(seed)).utf8), name: name)
            try parse(&reader, name: name)
        }
        if table {
            print("| recording | UWB updates | updates/s | of which acquiring | acquiring p50 µs | acquiring p99 µs | acquiring updates/s | acquiring window passes/update | acquiring window entries/update | tracking p50 ns | tracking p99 ns | mallocs/update |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        }
        for (index, input) in inputs.enumerated() {
            if !json && !table && index > 0 { print() }
            try report(input.name, header: input.header, events: input.events)
        }
    }

    /// Times one recording's events and prints its figures.
    private func report(_ recording: String, header: RecordingHeader, events: [RecordingEvent]) throws {
        let uwbCount = events.filter { if case .uwb = $0 { return true } else { return false } }.count

        let timing = time(events, header: header, uwbCount: uwbCount)
        guard timing.sink.isFinite else { return }
        let counting = nf_malloc_counting_available() == 1
        guard let all = timing.all.figures(countingMallocs: counting) else { return }
        var result = Result(all: all, acquiring: timing.acquiring.figures(countingMallocs: counting),
                            tracking: timing.tracking.figures(countingMallocs: counting))
        if timing.acquiringUpdatesPerPass > 0 {
            result.acquiring?.windowPassesPerUpdate = Double(timing.windowPassesPerPass) / Double(timing.acquiringUpdatesPerPass)
            result.acquiring?.windowEntriesPerUpdate = Double(timing.windowEntriesPerPass) / Double(timing.acquiringUpdatesPerPass)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else if table {
            let acquiring = result.acquiring.map {
                String(format: "%d | %.1f | %.1f | %.0f | %.2f | %.0f", $0.updates / passes, $0.p50Nanoseconds / 1000, $0.p99Nanoseconds / 1000,
                       $0.updatesPerSecond, $0.windowPassesPerUpdate ?? 0, $0.windowEntriesPerUpdate ?? 0)
            } ?? "0 | — | — | — | — | —"
            let tracking = result.tracking.map { String(format: "%.0f | %.0f", $0.p50Nanoseconds, $0.p99Nanoseconds) } ?? "— | —"
            let mallocs = result.all.mallocsPerUpdate.map { String(format: "%.3f", $0) } ?? "—"
            print("| \(recording) | \(uwbCount) | " + String(format: "%.0f", result.all.updatesPerSecond) + " | \(acquiring) | \(tracking) | \(mallocs) |")
        } else {
            print("recording        \(recording)")
            print("updates timed    \(result.all.updates) (\(uwbCount) × \(passes) passes, after one warm-up pass)")
            print(String(format: "latency/update   p50 %.0f ns, p90 %.0f ns, p99 %.0f ns (over blocks of up to 32 updates of one phase)", result.all.p50Nanoseconds, result.all.p90Nanoseconds, result.all.p99Nanoseconds))
            print("mallocs/update   " + (result.all.mallocsPerUpdate.map { String(format: "%.3f", $0) } ?? "not measured on this platform"))
            print(String(format: "throughput       %.0f updates/s of fusion time", result.all.updatesPerSecond))
            for (name, part) in [("acquiring", result.acquiring), ("tracking", result.tracking)] {
                guard let part else { print(name.padding(toLength: 17, withPad: " ", startingAt: 0) + "no update"); continue }
                let mallocs = part.mallocsPerUpdate.map { String(format: ", %.3f mallocs/update", $0) } ?? ""
                let work = part.windowPassesPerUpdate.map { passes in
                    String(format: ", %.2f window passes/update", passes)
                        + (part.windowEntriesPerUpdate.map { String(format: " (%.0f entries)", $0) } ?? "")
                } ?? ""
                print(name.padding(toLength: 17, withPad: " ", startingAt: 0)
                      + String(format: "%d updates: p50 %.0f ns, p99 %.0f ns, %.0f updates/s", part.updates, part.p50Nanoseconds,
                               part.p99Nanoseconds, part.updatesPerSecond) + mallocs + work)
            }
        }
    }

    /// Replays `events` through a fresh engine `passes` times after one warm-up pass. UWB
    /// updates are timed in blocks of up to `blockSize` consecutive ones (the poses between
    /// them included: ~10 ns each), so that the two clock reads (~20–40 ns) are spread over
    /// the block instead of dominating a sub-microsecond step; a block holds updates of one
    /// phase only (acquiring, or tracking: the object's phase before each update), and is
    /// closed early when the next update's phase differs. Returns the blocks of every update
    /// and of each phase, and a sink that keeps the results alive.
    private func time(_ events: [RecordingEvent], header: RecordingHeader, uwbCount: Int)
        -> (all: Blocks, acquiring: Blocks, tracking: Blocks, sink: Double, windowPassesPerPass: Int, windowEntriesPerPass: Int,
            acquiringUpdatesPerPass: Int) {
        let blockSize = 32
        // Counted in the warm-up pass: the window passes of every object, and the acquiring updates.
        var windowPassesPerPass = 0, windowEntriesPerPass = 0, acquiringUpdatesPerPass = 0
        var all = Blocks(), acquiring = Blocks(), tracking = Blocks()
        all.latencies.reserveCapacity((uwbCount / blockSize + 1) * passes)
        var sink = 0.0
        let allocateForTest = allocateForTest   // read once: the property wrapper costs ~100 ns a read
        // Each UWB event's object slot, resolved before any timing: the loop reads an event's
        // phase by slot, and passes each event on in place, instead of copying it out of the
        // array (its identifier retained and released) to read its object's name.
        var lookup = ReplayDriver(header: header, options: engine.fusionOptions)
        let uwbSlots: [Int] = events.map { event in
            if case .uwb(let id, _) = event { return lookup.slot(of: id) ?? -1 }
            return -1
        }
        for pass in 0...passes {
            var driver = ReplayDriver(header: header, options: engine.fusionOptions)
            var inBlock = 0, k = 0
            var blockTracking = false
            var start: UInt64 = 0, mallocsBefore: UInt64 = 0
            /// Closes the open block: its mean into the blocks of every update and of its phase.
            func close() {
                let end = DispatchTime.now().uptimeNanoseconds
                let after = nf_malloc_count()
                if pass > 0 {
                    let latency = Double(end - start) / Double(inBlock)
                    all.add(latency: latency, mallocs: after - mallocsBefore, nanoseconds: end - start, updates: inBlock)
                    if blockTracking {
                        tracking.add(latency: latency, mallocs: after - mallocsBefore, nanoseconds: end - start, updates: inBlock)
                    } else {
                        acquiring.add(latency: latency, mallocs: after - mallocsBefore, nanoseconds: end - start, updates: inBlock)
                    }
                }
                inBlock = 0
            }
            for i in events.indices {
                if uwbSlots[i] >= 0 {
                    let tracked = driver.phase(ofSlot: uwbSlots[i]) == .tracking
                    if pass == 0 && !tracked { acquiringUpdatesPerPass += 1 }
                    if inBlock > 0, tracked != blockTracking { close() }
                    if inBlock == 0 {
                        blockTracking = tracked
                        mallocsBefore = nf_malloc_count()
                        start = DispatchTime.now().uptimeNanoseconds
                    }
                }
                if case .uwb(_, _, let e, _)? = driver.apply(events[i]) {
                    // Negative control for the tests: one heap allocation per update.
                    if allocateForTest {
                        sink += Double([Double](repeating: 1, count: 3 + k % 5).count)
                        sink += withUnsafeTemporaryAllocation(of: Double.self, capacity: 4096 + k % 5) { buffer in
                            buffer.initialize(repeating: 1)
                            return buffer[k % 5]
                        }
                    }
                    sink += e.distance ?? 0
                    inBlock += 1
                    k += 1
                }
                guard inBlock > 0, inBlock == blockSize || i == events.count - 1 else { continue }
                close()
            }
            if pass == 0 {
                for slot in driver.objectIDs.indices {
                    let snapshot = driver.engine.snapshot(driver.handle(ofSlot: slot))
                    windowPassesPerPass += snapshot.windowPasses
                    windowEntriesPerPass += snapshot.windowEntriesLinearised
                }
            }
        }
        return (all, acquiring, tracking, sink, windowPassesPerPass, windowEntriesPerPass, acquiringUpdatesPerPass)
    }
}
