import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording

/// The human summary printed by `replay`.
enum ReplayReport {
    static func f(_ x: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", x) }

    static func statusText(_ s: ConvergenceStatus) -> String {
        switch s {
        case .unknown: return "unknown"
        case .converged: return "converged"
        case .notConverged(let r): return "notConverged(" + r.names.joined(separator: ", ") + ")"
        }
    }

    /// "move forward 0.75 m (bearing σ 2.1° after)", or "none".
    static func guidanceText(_ g: MotionGuidance?) -> String {
        guard let g else { return "none" }
        return "\(g.advice) (bearing σ \(f(Angle.degrees(radians: g.expectedBearingStandardDeviation), 1))° after)"
    }

    static func text(_ s: ReplaySummary) -> String {
        var out = ""
        let t0 = s.firstTime ?? 0
        let span = (s.lastTime ?? t0) - t0
        out += "recording  \(s.file)\n"
        out += "device     \(s.header.deviceName) (distance: \(s.header.capabilities.supportsPreciseDistanceMeasurement ? "yes" : "no"), "
            + "direction: \(s.header.capabilities.supportsDirectionMeasurement ? "yes" : "no"), "
            + "camera assistance: \(s.header.capabilities.supportsCameraAssistance ? "yes" : "no"))\n"
        out += "updates    \(s.poseCount) poses, \(s.uwbCount) UWB updates over \(f(span, 1)) s; \(s.estimateLineCount) estimate lines\n"
        if !s.sessionTimeline.isEmpty {
            out += "session    " + s.sessionTimeline.map { "\(f($0.time - t0, 1)) s \(statusText($0.status))" }.joined(separator: "; ") + "\n"
        }
        for o in s.objects {
            out += "\nobject \(o.objectID) (\(o.kind.rawValue)), \(o.updates) updates\n"
            if let c = o.firstConvergedTime {
                out += "  first converged   at \(f(c - t0, 1)) s\n"
            } else {
                out += "  first converged   never\n"
            }
            if let e = o.finalEstimate {
                out += "  final distance    " + (e.distance.map { "\(f($0)) m" } ?? "—") + "\n"
                out += "  horizontalAngle   " + (e.horizontalAngle.map { "\(f(Angle.degrees(radians: $0), 1))°" } ?? "—") + "\n"
                out += "  vertical          " + (e.verticalDirectionEstimate?.rawValue ?? "—") + "\n"
                if let w = e.worldTransform {
                    let p = w.translation
                    out += "  world position    (\(f(p.x)), \(f(p.y)), \(f(p.z))) m"
                    if let truth = o.truthInWorld {
                        let error = (p - truth).scaledLength
                        out += error < 100 ? ", \(f(error * 100, 1)) cm from truth" : ", \(Figure.text(error, decimals: 1)) m from truth"
                    }
                    out += "\n"
                } else {
                    out += "  world position    —\n"
                }
            }
            if !o.coachingTimeline.isEmpty {
                out += "  coaching timeline\n"
                for (t, status) in o.coachingTimeline { out += "    \(f(t - t0, 1).leftPadded(6)) s  \(statusText(status))\n" }
            }
            if !o.guidanceTimeline.isEmpty {
                out += "  guidance\n"
                for (t, g) in o.guidanceTimeline { out += "    \(f(t - t0, 1).leftPadded(6)) s  \(guidanceText(g))\n" }
            }
        }
        return out
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
