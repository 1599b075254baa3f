import Foundation
import NearbyFusion
import NearbyFusionRecording
import Testing
@Test func tmpDebugSBS() throws {
    let path = "../shared/datasets/ntu-viral/sbs_01.jsonl"
    guard FileManager.default.fileExists(atPath: path) else { return }
    var reader = try RecordingReader(path: path)
    let header = try reader.readHeader()
    var driver = ReplayDriver(header: header)
    var nextPrint = 280.0
    let truth = Vector3(10.8843, 1.2568, 11.0781)
    while let e = try reader.next() {
        guard let step = driver.apply(e) else { continue }
        if case .uwb(let k, let m, let est, _) = step, k == 1, m.timestamp >= nextPrint, m.timestamp < 312 {
            nextPrint = m.timestamp + 1.0
            let s = driver.engine.snapshot(driver.handle(ofSlot: 1))
            var line = String(format: "DBG t %.1f r %@ n %d status %@", m.timestamp, m.distance.map { String(format: "%.2f", $0) } ?? "nil", s.hypothesisCount, "\(est.convergence?.status.name ?? "-")")
            if let mm = s.moments {
                let d = mm.meanInWorld - truth
                line += String(format: " err (%.2f %.2f %.2f) sd (%.2f %.2f %.2f)", d.x, d.y, d.z, mm.covariance.m00.squareRoot(), mm.covariance.m11.squareRoot(), mm.covariance.m22.squareRoot())
            }
            if let a = s.assessment { line += String(format: " hσ %.3f", a.horizontalAngleStandardDeviation) + " \(a.verticalCategory) pa \(String(format: "%.2f", a.probabilityAbove))" }
            let top = s.hypotheses.sorted { $0.logWeight > $1.logWeight }.prefix(4)
            for h in top { let d = h.meanInWorld - truth; line += String(format: " | w %.2f dy %.1f dz %.1f sy %.2f", exp(h.logWeight), d.y, d.z, h.covariance.m11.squareRoot()) }
            print(line)
        }
    }
}
