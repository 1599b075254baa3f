import ArgumentParser
import CMallocCounter
import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the latency of the fusion step on a recording's updates.",
        discussion: """
        The recording is parsed into memory first (parsing is not timed). Its events are then \
        replayed through a fresh engine (the replay's own driver) --passes times after one warm-up pass; \
        UWB updates are timed in blocks of 32 consecutive ones (the poses between them \
        included), so that the clock reads do not dominate; allocations are counted by an \
        interposed malloc. Reported: p50/p90/p99 over blocks of the mean latency per update \
        in ns, mallocs per update, and UWB updates per second of fusion time.
        """)

    @Argument(help: "A recording.", completion: .file(extensions: ["jsonl"]))
    var recording: String

    @Option(help: "Replays after the warm-up pass.")
    var passes: Int = 20

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var engine: EngineOptions

    @Flag(help: .hidden)
    var allocateForTest = false

    struct Result: Encodable {
        var p50Nanoseconds: Double
        var p90Nanoseconds: Double
        var p99Nanoseconds: Double
        var mallocsPerUpdate: Double?
        var updatesPerSecond: Double
        var updates: Int
    }

    func validate() throws {
        guard passes >= 1 else { throw ValidationError("--passes must be at least 1") }
    }

    func run() throws {
        var header: RecordingHeader?
        var events: [RecordingEvent] = []
        do {
            var reader = try RecordingReader(path: recording)
            header = try reader.readHeader()
            while let e = try reader.next() { events.append(e) }
        } catch {
            throw CommandFailure(message: error.description)
        }
        guard let header else { return }
        let uwbCount = events.filter { if case .uwb = $0 { return true } else { return false } }.count
        guard uwbCount > 0 else { throw CommandFailure(message: "\(recording): no UWB updates to time") }

        let timing = time(events, header: header, uwbCount: uwbCount)
        let latencies = timing.latencies, mallocs = timing.mallocs, total = timing.total, timedUpdates = timing.updates
        guard timing.sink.isFinite else { return }
        let sortedLatencies = latencies.sorted()
        func percentile(_ q: Double) -> Double { Statistics.quantile(sorted: sortedLatencies, q) }
        let n = Double(timedUpdates)
        let result = Result(p50Nanoseconds: percentile(0.5), p90Nanoseconds: percentile(0.9), p99Nanoseconds: percentile(0.99),
                            mallocsPerUpdate: nf_malloc_counting_available() == 1 ? Double(mallocs) / n : nil,
                            updatesPerSecond: n / (Double(max(total, 1)) * 1e-9), updates: timedUpdates)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print("recording        \(recording)")
            print("updates timed    \(result.updates) (\(uwbCount) × \(passes) passes, after one warm-up pass)")
            print(String(format: "latency/update   p50 %.0f ns, p90 %.0f ns, p99 %.0f ns (over blocks of 32 updates)", result.p50Nanoseconds, result.p90Nanoseconds, result.p99Nanoseconds))
            print("mallocs/update   " + (result.mallocsPerUpdate.map { String(format: "%.3f", $0) } ?? "not measured on this platform"))
            print(String(format: "throughput       %.0f updates/s of fusion time", result.updatesPerSecond))
        }
    }

    /// Replays `events` through a fresh engine `passes` times after one warm-up pass. UWB
    /// updates are timed in blocks of `blockSize` consecutive ones (the poses between them
    /// included: ~10 ns each), so that the two clock reads (~20–40 ns) are spread over the
    /// block instead of dominating a sub-microsecond step. Returns each block's mean ns per
    /// update, the mallocs and ns in all blocks, the updates timed, and a sink that keeps the
    /// results alive.
    private func time(_ events: [RecordingEvent], header: RecordingHeader, uwbCount: Int)
        -> (latencies: [Double], mallocs: UInt64, total: UInt64, updates: Int, sink: Double) {
        let blockSize = 32
        var latencies: [Double] = []
        latencies.reserveCapacity((uwbCount / blockSize + 1) * passes)
        var mallocs: UInt64 = 0
        var total: UInt64 = 0
        var timedUpdates = 0
        var sink = 0.0
        let allocateForTest = allocateForTest   // read once: the property wrapper costs ~100 ns a read
        for pass in 0...passes {
            var driver = ReplayDriver(header: header, options: engine.fusionOptions)
            var inBlock = 0, k = 0
            var start: UInt64 = 0, mallocsBefore: UInt64 = 0
            for (i, event) in events.enumerated() {
                let isUpdate: Bool
                if case .uwb = event { isUpdate = true } else { isUpdate = false }
                if inBlock == 0, isUpdate {
                    mallocsBefore = nf_malloc_count()
                    start = DispatchTime.now().uptimeNanoseconds
                }
                if case .uwb(_, _, let e, _)? = driver.apply(event) {
                    // Negative control for the tests: one heap allocation per update.
                    if allocateForTest { sink += Double([Double](repeating: 1, count: 3 + k % 5).count) }
                    sink += e.distance ?? 0
                    inBlock += 1
                    k += 1
                }
                guard inBlock > 0, inBlock == blockSize || i == events.count - 1 else { continue }
                let end = DispatchTime.now().uptimeNanoseconds
                let after = nf_malloc_count()
                if pass > 0 {
                    latencies.append(Double(end - start) / Double(inBlock))
                    mallocs += after - mallocsBefore
                    total += end - start
                    timedUpdates += inBlock
                }
                inBlock = 0
            }
        }
        return (latencies, mallocs, total, timedUpdates, sink)
    }
}
