import ArgumentParser
import CMallocCounter
import Foundation
import NearbyFusion
import NearbyFusionRecording

/// One replayed event, with the object resolved to its index.
enum BenchStep {
    case pose(DevicePose)
    case uwb(Int, UWBMeasurement)
    case removed(String)
}

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the latency of the fusion step on a recording's updates.",
        discussion: """
        The recording is parsed into memory first (parsing is not timed). Its poses and UWB \
        updates are then replayed through a fresh engine --passes times after one warm-up pass; \
        each UWB update's `ingest` call is timed on its own (the clock read adds ~20–40 ns) and \
        allocations are counted by an interposed malloc. Reported: p50/p90/p99 latency in ns, \
        mallocs per update, and UWB updates per second of fusion time.
        """)

    @Argument(help: "A recording.", completion: .file(extensions: ["jsonl"]))
    var recording: String

    @Option(help: "Replays after the warm-up pass.")
    var passes: Int = 20

    @Flag(help: "Print one JSON object.")
    var json = false

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
        // Pre-resolve object handles so that the timed loop does no string lookups.
        let ids = header.objects.map(\.id)
        var steps: [BenchStep] = []
        steps.reserveCapacity(events.count)
        for event in events {
            switch event {
            case .pose(let p): steps.append(.pose(p))
            case .uwb(let id, let m): if let index = ids.firstIndex(of: id) { steps.append(.uwb(index, m)) }
            case .removed(let id, _, _): steps.append(.removed(id))
            default: break
            }
        }
        let uwbCount = steps.filter { if case .uwb = $0 { return true } else { return false } }.count
        guard uwbCount > 0 else { throw CommandFailure(message: "\(recording): no UWB updates to time") }

        var latencies = [UInt64](repeating: 0, count: uwbCount * passes)
        var mallocs: UInt64 = 0
        var total: UInt64 = 0
        var sink = 0.0
        for pass in 0...passes {
            var engine = FusionEngine(capabilities: header.capabilities, options: FusionOptions())
            var handles: [ObjectHandle] = []
            handles.reserveCapacity(ids.count)
            for (id, kind) in header.objects { handles.append(engine.register(objectID: id, kind: kind, ranging: header.ranging(of: id))) }
            var k = 0
            for step in steps {
                switch step {
                case .pose(let p): _ = engine.ingest(p)
                case .removed(let id): engine.remove(objectID: id)
                case .uwb(let index, let m):
                    let before = nf_malloc_count()
                    let start = DispatchTime.now().uptimeNanoseconds
                    let e = engine.ingest(m, for: handles[index])
                    // Negative control for the tests: one heap allocation inside the bracket.
                    if allocateForTest { sink += Double([Double](repeating: 1, count: 3 + k % 5).count) }
                    let end = DispatchTime.now().uptimeNanoseconds
                    let after = nf_malloc_count()
                    sink += e.distance ?? 0
                    if pass > 0 {
                        latencies[(pass - 1) * uwbCount + k] = end - start
                        mallocs += after - before
                        total += end - start
                    }
                    k += 1
                }
            }
        }
        let sortedLatencies = latencies.sorted().map(Double.init)
        func percentile(_ q: Double) -> Double { Statistics.quantile(sorted: sortedLatencies, q) }
        let n = Double(latencies.count)
        let result = Result(p50Nanoseconds: percentile(0.5), p90Nanoseconds: percentile(0.9), p99Nanoseconds: percentile(0.99),
                            mallocsPerUpdate: nf_malloc_counting_available() == 1 ? Double(mallocs) / n : nil,
                            updatesPerSecond: n / (Double(max(total, 1)) * 1e-9), updates: latencies.count)
        guard sink.isFinite else { return }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print("recording        \(recording)")
            print("updates timed    \(result.updates) (\(uwbCount) × \(passes) passes, after one warm-up pass)")
            print(String(format: "latency          p50 %.0f ns, p90 %.0f ns, p99 %.0f ns", result.p50Nanoseconds, result.p90Nanoseconds, result.p99Nanoseconds))
            print("mallocs/update   " + (result.mallocsPerUpdate.map { String(format: "%.3f", $0) } ?? "not measured on this platform"))
            print(String(format: "throughput       %.0f updates/s of fusion time", result.updatesPerSecond))
        }
    }
}
