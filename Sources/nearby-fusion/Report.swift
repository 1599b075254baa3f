import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionRecording

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a self-contained HTML report (inline SVG, no network) of a replay.",
        discussion: """
        At the top: the device's capabilities and, when the recording has truth, the evaluation \
        table. Per object: a top-down (X–Z) view, a zoomed view of the object's neighbourhood and a \
        side (X–Y) view of the device path with the true and estimated positions and the 2σ \
        ellipse; then, on one shared time axis: horizontalAngle (fused, raw radio, truth), its \
        error with the filter's 2σ band, distance, the position error with its 2σ band, the \
        vertical estimate against truth, and the coaching lanes (one per reason).
        """)

    @Argument(help: "A recording.", completion: .file(extensions: ["jsonl"]))
    var recording: String

    @Option(name: .shortAndLong, help: "The HTML file to write.")
    var output: String

    @OptionGroup var engine: EngineOptions

    func run() throws {
        let data: ReportData
        do { data = try ReportData.collect(path: recording, options: engine.fusionOptions) } catch let e as RecordingError {
            throw CommandFailure(message: e.description)
        } catch let e as ReplayError {
            throw CommandFailure(message: e.description)
        }
        let html = ReportHTML.render(data)
        let file = try OutputFile(path: output)
        try file.write(html)
        try file.commit()
        print("wrote \(output) (\(html.utf8.count / 1024) KiB, \(data.objects.count) object\(data.objects.count == 1 ? "" : "s"))")
    }
}

/// What the report draws, gathered by replaying the recording through the engine.
struct ReportData {
    struct Sample {
        var time: Double
        var estimate: NearbyObjectEstimate
        var truth: Vector3?
        var trueHorizontalAngle: Double?
        var trueDistance: Double?
        /// The radio's own horizontal angle (its direction, without camera assistance), radians.
        var rawHorizontalAngle: Double?
        var rawDistance: Double?
        /// The engine's estimate after this update (published or not): mean and covariance.
        var moments: MixtureMoments?
        /// The 1σ of the bearing the estimate gives, `√(gᵀ P g)` with `g` the gradient of
        /// the horizontal angle at the mean, radians.
        var bearingSigma: Double?
        /// The truth's vertical category (`same` within ±τ of the device, else above/below).
        var trueVertical: VerticalDirectionEstimate?
    }
    struct ObjectTrack {
        var id: String
        /// Every update, for the first ``ReportData/detailedObjects`` objects only.
        var samples: [Sample] = []
        var finalMoments: MixtureMoments?
        var truths: [Vector3] = []
        /// Kept for every object (the summary table of those beyond the detailed ones).
        var updates = 0
        var firstConverged: Double?
        var lastEstimate: NearbyObjectEstimate?
        var lastTruth: Vector3?
    }
    /// Objects drawn in full (maps, time series, timeline); the others are summarised in one
    /// table, so that the page stays bounded (10,000 objects: a few MB, not 140).
    static let detailedObjects = 50
    var recording: String
    var header: RecordingHeader?
    /// The evaluation against the recording's truth (the tables of `evaluate`).
    var evaluation: RecordingEvaluationReport?
    var devicePath: [Vector3] = []
    var objects: [ObjectTrack] = []
    var sessionChanges: [(Double, ConvergenceStatus)] = []
    var start = 0.0
    var end = 0.0

    static func collect(path: String, options: FusionOptions = FusionOptions()) throws -> ReportData {
        var data = ReportData(recording: path)
        var truth: [Vector3?] = []
        var pose: DevicePose?
        var first: Double?
        var poseCount = 0
        let tolerance = options.levelTolerance
        // The evaluation table is scored in the same pass (a recording on standard input can
        // be read only once).
        var evaluator: RecordingEvaluator?
        try RecordingReplay.drive(path: path, options: options, withMoments: true, start: { header in
            data.header = header
            data.objects = header.objects.map { ObjectTrack(id: $0.id) }
            truth = Array(repeating: nil, count: header.objects.count)
            evaluator = RecordingEvaluator(header: header, options: options)
        }) { step in
            evaluator?.observe(step)
            if let t = step.timestamp { if first == nil { first = t }; data.end = t - (first ?? 0) }
            let t0 = first ?? 0
            switch step {
            case .pose(let p, let change):
                pose = p
                poseCount += 1
                if poseCount % 6 == 1 { data.devicePath.append(p.positionInWorld) }   // 10 Hz is plenty to draw
                if let c = change { data.sessionChanges.append((c.timestamp - t0, c.convergence.status)) }
            case .uwb(let k, let m, let e, let moments):
                data.objects[k].updates += 1
                data.objects[k].lastEstimate = e
                if e.convergence?.status.isConverged == true, data.objects[k].firstConverged == nil {
                    data.objects[k].firstConverged = m.timestamp - t0
                }
                guard k < Self.detailedObjects else { return }
                var s = Sample(time: m.timestamp - t0, estimate: e, truth: truth[k], rawDistance: m.distance, moments: moments)
                if let d = pose {
                    if let p = truth[k] {
                        s.trueHorizontalAngle = HorizontalAngle.angle(objectInWorld: p, devicePositionInWorld: d.positionInWorld, worldFromDevice: d.worldFromDevice)
                        s.trueDistance = (p - d.positionInWorld).length
                        s.trueVertical = RecordingEvaluation.trueVerticalCategory(heightDifference: p.y - d.positionInWorld.y,
                                                                                   levelTolerance: tolerance)
                    }
                    s.rawHorizontalAngle = m.directionInDevice.flatMap { RecordingEvaluation.rawHorizontalAngle(directionInDevice: $0, pose: d) }
                    if let mm = moments {
                        let v = mm.meanInWorld - d.positionInWorld
                        let rho2 = v.x * v.x + v.z * v.z
                        if rho2 > 1e-4 { s.bearingSigma = mm.covariance.quadraticForm(Vector3(-v.z / rho2, 0, v.x / rho2)).squareRoot() }
                    }
                }
                data.objects[k].samples.append(s)
                data.objects[k].finalMoments = moments
            case .truth(let k, _, let p):
                truth[k] = p
                data.objects[k].lastTruth = p
                if k < Self.detailedObjects { data.objects[k].truths.append(p) }
            case .removed, .motionState: break
            }
        }
        data.evaluation = data.objects.contains { !$0.truths.isEmpty } ? evaluator?.report(recording: path) : nil
        return data
    }
}

