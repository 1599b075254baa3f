import Foundation
import NearbyFusion
import NearbyFusionRecording

/// What the report draws, gathered by replaying the recording through the engine.
public struct ReportData {
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
        /// The guidance published, as a step in the world: from the device's position, by its
        /// displacement turned into the world frame, metres.
        var guidanceInWorld: (origin: Vector3, displacement: Vector3)?
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
    /// The objects of the recording.
    public var objectCount: Int { objects.count }
    var sessionChanges: [(Double, ConvergenceStatus)] = []
    var start = 0.0
    var end = 0.0

    /// Replays the recording at `path` (`-`: standard input) through the engine and gathers
    /// what the report draws; throws the reader's or the replay's error, naming file and line.
    public static func collect(path: String, options: FusionOptions = FusionOptions()) throws -> ReportData {
        try collect(reader: RecordingReader(path: path), name: path, options: options)
    }

    /// ``collect(path:options:)`` over a reader that has not read its header yet (a recording
    /// held in memory); `name` stands for the file in messages and on the page.
    public static func collect(reader: RecordingReader, name path: String, options: FusionOptions = FusionOptions()) throws -> ReportData {
        var data = ReportData(recording: path)
        var truth: [Vector3?] = []
        var pose: DevicePose?
        var first: Double?
        var poseCount = 0
        let tolerance = options.coaching.levelTolerance
        // The evaluation table is scored in the same pass (a recording on standard input can
        // be read only once).
        var evaluator: RecordingEvaluator?
        try RecordingReplay.drive(reader: reader, name: path, options: options, withMoments: true, start: { header in
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
                    if let g = e.guidance { s.guidanceInWorld = (d.positionInWorld, d.worldFromDevice.rotate(g.displacementInDevice)) }
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

