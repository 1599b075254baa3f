import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSession
import NearbyFusionSimulation

/// The fuzz targets: every decoder of untrusted bytes the package has, each run on one input.
/// A target returns normally for any input it accepts or rejects with an error; a crash, a
/// hang, a leak (address sanitizer) or a disagreement (`fatalError`) is a finding.
///
/// Built two ways (see `.ci/fuzz`):
/// - with `-sanitize=fuzzer,address -DFUZZING`: libFuzzer drives `LLVMFuzzerTestOneInput`,
///   the target named by `NEARBY_FUZZ_TARGET`;
/// - normally: a command that replays files (a saved corpus) through a target, so that the
///   corpus is a regression test without the fuzzer.
enum FuzzTargets {
    static let all = ["decoders", "script", "coaching", "tokens", "datasets", "replay", "evaluate", "report", "coach", "merge", "archive"]

    /// A header that declares the objects most lines name, so that mutated lines after it
    /// reach the fast decoder.
    static let header = Array(#"""
        {"type":"header","format":"nearby-recording","version":1,"device":{"name":"phone","supportsPreciseDistanceMeasurement":true,"supportsDirectionMeasurement":true,"supportsCameraAssistance":true,"supportsBluetoothChannelSounding":true},"objects":[{"id":"tag","kind":"accessory"},{"id":"peer","kind":"peer"},{"id":"cs","kind":"accessory","ranging":"bluetoothChannelSounding"}]}

        """#.utf8)

    static func run(_ target: String, _ bytes: [UInt8]) {
        switch target {
        case "decoders":
            differential(bytes)
            differential(header + bytes)
        case "script":
            _ = try? SimulationScript.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz", directory: "/nonexistent", seed: 1)
        case "coaching":
            _ = try? CoachingExpectation.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz")
        case "datasets":
            // The LIAS planar UWB reader (`convert`): the bytes up to the first 0xFF (never in
            // UTF-8) are the UWB file, the rest the motion-capture file; either alone is both.
            let split = bytes.firstIndex(of: 0xFF)
            let uwb = Data(bytes[..<(split ?? bytes.endIndex)])
            let capture = split.map { Data(bytes[($0 + 1)...]) } ?? uwb
            // What `convert` writes of what it accepts always reads back.
            if let events = try? LIASPlanarUWB.events(uwb: uwb, uwbFile: "uwb", motionCapture: capture, motionCaptureFile: "capture") {
                let written = JSONLines.text(events)
                if case .error(let message) = read(Array(written.utf8), fastPath: true) {
                    fatalError("convert wrote a recording that does not read back: \(message)")
                }
            }
            // The trajectory readers (`simulate --tum/--euroc`, scripts' `path`) on the same bytes.
            _ = try? TrajectoryFormats.readTUM(Data(bytes), file: "tum")
            _ = try? TrajectoryFormats.readEuRoC(Data(bytes), file: "euroc")
        case "replay":
            // `replay`: every estimate line finite and inside the format's bounds.
            let reader = RecordingReader(bytes: recording(bytes), name: "fuzz")
            try? RecordingReplay.drive(reader: reader, name: "fuzz") { step in
                if case .uwb(_, _, let e, _) = step { checkPublishable(e) }
            }
        case "evaluate":
            // `evaluate --json`: the evaluation of what replays, encoded.
            var evaluator: RecordingEvaluator?
            let reader = RecordingReader(bytes: recording(bytes), name: "fuzz")
            guard (try? RecordingReplay.drive(reader: reader, name: "fuzz", withMoments: true, start: { h in
                evaluator = RecordingEvaluator(header: h)
            }, step: { evaluator?.observe($0) })) != nil, let evaluator else { return }
            let report = evaluator.report(recording: "fuzz")
            guard (try? jsonEncoder.encode(report)) != nil else { fatalError("evaluate --json cannot encode \(report)") }
            var pool = EvaluationPool([report])
            pool.merge(EvaluationPool([report]))
            _ = pool.total()
        case "report":
            // `report`: the page of what replays (its size set by the events, never by a value).
            guard let data = try? ReportData.collect(reader: RecordingReader(bytes: recording(bytes), name: "fuzz"), name: "fuzz")
            else { return }
            _ = ReportHTML.render(data)
        case "coach":
            // `coach`: the bytes up to the first 0xFF are the expectations, the rest the
            // recording's lines after the header.
            let split = bytes.firstIndex(of: 0xFF) ?? bytes.endIndex
            let text = String(decoding: bytes[..<split], as: UTF8.self)
            let lines = split < bytes.endIndex ? Array(bytes[(split + 1)...]) : []
            guard let expectations = try? CoachingExpectation.parse(text, file: "fuzz") else { return }
            _ = try? CoachingCheck.check(reader: RecordingReader(bytes: recording(lines), name: "fuzz"), name: "fuzz",
                                         expectations: expectations)
        case "merge":
            // `merge`: a shard's document, decoded and added to itself.
            guard let pool = try? JSONDecoder().decode(EvaluationPool.self, from: Data(bytes)) else { return }
            var merged = pool
            merged.merge(pool)
            _ = merged.total()
            _ = try? jsonEncoder.encode(merged)
        case "tokens":
            let data = Data(bytes)
            _ = NIDiscoveryToken(data: data)
            _ = try? JSONDecoder().decode(NIDiscoveryToken.self, from: data)
            _ = try? NINearbyAccessoryConfiguration(data: data)
        case "archive":
            // Apart from `tokens`: Foundation's unarchiver leaks on malformed property lists
            // (suppressed, see Tests/FuzzCorpus/lsan.supp), and libFuzzer's leak check after
            // every such input makes this target ~100× slower.
            _ = try? NSKeyedUnarchiver.unarchivedObject(ofClass: NIDiscoveryToken.self, from: Data(bytes))
        default:
            fatalError("unknown fuzz target '\(target)' (one of \(all.joined(separator: ", ")))")
        }
    }

    /// A whole recording: the bytes as they are when they start with a header line, else
    /// after ``header`` (so that both whole recordings and mutated lines are seeds).
    static func recording(_ bytes: [UInt8]) -> [UInt8] {
        bytes.starts(with: Array(#"{"type":"header""#.utf8)) ? bytes : header + bytes
    }

    static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// A published estimate no reader would refuse: finite numbers, a position within the
    /// format's ±1,000,000 m, a distance within 1,000 m, a unit direction.
    static func checkPublishable(_ e: NearbyObjectEstimate) {
        if let d = e.distance, !(d.isFinite && d >= 0 && d <= NearbyObjectEstimate.largestDistanceMetres) {
            fatalError("published distance \(d)")
        }
        if let u = e.direction, !(abs(u.length - 1) < 1e-6) { fatalError("published direction \(u)") }
        if let a = e.horizontalAngle, !a.isFinite { fatalError("published horizontalAngle \(a)") }
        if let w = e.worldTransform {
            let p = w.translation, m = NearbyObjectEstimate.largestCoordinateMetres
            if !(abs(p.x) <= m && abs(p.y) <= m && abs(p.z) <= m) { fatalError("published worldTransform \(p)") }
        }
        if let v = e.velocity, !v.isFinite { fatalError("published velocity \(v)") }
        let line = EstimateStreamLine.object(e).jsonLine
        if line.contains("nan") { fatalError("estimate line \(line)") }
    }

    /// The whole reader, through the fast decoder and through the strict one alone: the same
    /// events, or the same error, on every input.
    static func differential(_ bytes: [UInt8]) {
        let fast = read(bytes, fastPath: true), strict = read(bytes, fastPath: false)
        guard fast == strict else {
            fatalError("fast and strict decoders disagree:\n  fast:   \(fast)\n  strict: \(strict)")
        }
    }

    enum Outcome: Equatable, CustomStringConvertible {
        case events([RecordingEvent])
        case error(String)
        var description: String {
            switch self {
            case .events(let e): return "\(e.count) events, last \(e.last.map { "\($0)" } ?? "none")"
            case .error(let m): return m
            }
        }
    }

    static func read(_ bytes: [UInt8], fastPath: Bool) -> Outcome {
        var reader = RecordingReader(bytes: bytes, name: "fuzz")
        reader.usesFastPath = fastPath
        var events: [RecordingEvent] = []
        do {
            while let e = try reader.next() { events.append(e) }
        } catch {
            return .error(error.description)
        }
        return .events(events)
    }
}

#if FUZZING
import CLibFuzzer

/// The entry point SwiftPM links as `main` (it renames an executable's entry point to
/// `<module>_main`, so libFuzzer's own `main` cannot be used): hands the arguments to
/// libFuzzer's driver with the target of `NEARBY_FUZZ_TARGET`.
@_cdecl("nearby_fusion_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
        FuzzTargets.run(fuzzTarget, data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }
}

let fuzzTarget = ProcessInfo.processInfo.environment["NEARBY_FUZZ_TARGET"] ?? "decoders"
#else
/// `nearby-fusion-fuzz TARGET FILE…`: runs each file through the target (a saved corpus as a
/// regression test); exits 0 when none crashed or disagreed.
@main
struct ReplayCorpus {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.first == "write-archive-seed", let path = arguments.dropFirst().first {
            // The `archive` target's seed: a token as NSKeyedArchiver writes it.
            let token = NIDiscoveryToken(data: Data("NFDT".utf8 + (1...16).map { UInt8($0) }))!
            let archive = try! NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
            _ = FileManager.default.createFile(atPath: path, contents: archive)
            return
        }
        guard let target = arguments.first, FuzzTargets.all.contains(target) else {
            FileHandle.standardError.write(Data("usage: nearby-fusion-fuzz \(FuzzTargets.all.joined(separator: "|")) FILE…\n".utf8))
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("\(path): cannot read\n".utf8))
                exit(2)
            }
            FuzzTargets.run(target, [UInt8](data))
            count += 1
        }
        print("\(target): \(count) inputs, no finding")
    }
}
#endif
