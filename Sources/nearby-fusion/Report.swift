import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionRecording

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a self-contained HTML report (inline SVG, no network) of a replay.",
        discussion: """
        Per object: a top-down (X–Z) and a side (X–Y) view of the device path with the true and \
        estimated object positions and the estimate's 2σ ellipse; horizontalAngle and distance over \
        time against truth; the convergence and coaching timeline.
        """)

    @Argument(help: "A recording.", completion: .file(extensions: ["jsonl"]))
    var recording: String

    @Option(name: .shortAndLong, help: "The HTML file to write.")
    var output: String

    func run() throws {
        let data: ReportData
        do { data = try ReportData.collect(path: recording) } catch let e as RecordingError {
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
    var devicePath: [Vector3] = []
    var objects: [ObjectTrack] = []
    var sessionChanges: [(Double, ConvergenceStatus)] = []
    var start = 0.0
    var end = 0.0

    static func collect(path: String) throws -> ReportData {
        var data = ReportData(recording: path)
        var truth: [Vector3?] = []
        var pose: DevicePose?
        var first: Double?
        var poseCount = 0
        try RecordingReplay.drive(path: path, withMoments: true, start: { header in
            data.objects = header.objects.map { ObjectTrack(id: $0.id) }
            truth = Array(repeating: nil, count: header.objects.count)
        }) { step in
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
                var s = Sample(time: m.timestamp - t0, estimate: e, truth: truth[k])
                if let p = truth[k], let d = pose {
                    s.trueHorizontalAngle = HorizontalAngle.angle(objectInWorld: p, devicePositionInWorld: d.positionInWorld, worldFromDevice: d.worldFromDevice)
                    s.trueDistance = (p - d.positionInWorld).length
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
        return data
    }
}

/// Renders the report: plain HTML, inline CSS and SVG, no scripts, no external resources.
enum ReportHTML {
    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func f(_ x: Double) -> String { String(format: "%.1f", x) }

    /// A linear map from data coordinates to SVG pixels.
    struct Frame {
        var x0, x1, y0, y1: Double
        var width = 440.0, height = 300.0, margin = 52.0
        func px(_ x: Double) -> Double { margin + (x - x0) / max(x1 - x0, 1e-9) * (width - 2 * margin) }
        func py(_ y: Double) -> Double { height - margin - (y - y0) / max(y1 - y0, 1e-9) * (height - 2 * margin) }

        /// Equal scale on both axes around the given points (for maps).
        static func equal(_ points: [(Double, Double)], width: Double = 440, height: Double = 300) -> Frame {
            var minX = points.map(\.0).min() ?? 0, maxX = points.map(\.0).max() ?? 1
            var minY = points.map(\.1).min() ?? 0, maxY = points.map(\.1).max() ?? 1
            let pad = 0.5
            minX -= pad; maxX += pad; minY -= pad; maxY += pad
            let sx = (maxX - minX) / (width - 104), sy = (maxY - minY) / (height - 104)
            let s = max(sx, sy)
            let cx = (minX + maxX) / 2, cy = (minY + maxY) / 2
            return Frame(x0: cx - s * (width - 104) / 2, x1: cx + s * (width - 104) / 2, y0: cy - s * (height - 104) / 2, y1: cy + s * (height - 104) / 2,
                         width: width, height: height)
        }
    }

    static func axes(_ fr: Frame, xLabel: String, yLabel: String) -> String {
        var s = "<rect x='\(f(fr.margin))' y='\(f(fr.margin))' width='\(f(fr.width - 2 * fr.margin))' height='\(f(fr.height - 2 * fr.margin))' class='plot'/>"
        for k in 0...4 {
            let x = fr.x0 + Double(k) / 4 * (fr.x1 - fr.x0), y = fr.y0 + Double(k) / 4 * (fr.y1 - fr.y0)
            s += "<text x='\(f(fr.px(x)))' y='\(f(fr.height - fr.margin + 14))' class='tick' text-anchor='middle'>\(String(format: "%.1f", x))</text>"
            s += "<text x='\(f(fr.margin - 4))' y='\(f(fr.py(y) + 4))' class='tick' text-anchor='end'>\(String(format: "%.1f", y))</text>"
        }
        s += "<text x='\(f(fr.width / 2))' y='\(f(fr.height - 6))' class='label' text-anchor='middle'>\(escape(xLabel))</text>"
        s += "<text x='10' y='\(f(fr.height / 2))' class='label' text-anchor='middle' transform='rotate(-90 12 \(f(fr.height / 2)))'>\(escape(yLabel))</text>"
        return s
    }

    static func polyline(_ points: [(Double, Double)], _ fr: Frame, cls: String) -> String {
        guard !points.isEmpty else { return "" }
        return "<polyline class='\(cls)' points='" + points.map { "\(f(fr.px($0.0))),\(f(fr.py($0.1)))" }.joined(separator: " ") + "'/>"
    }

    /// The 2σ ellipse of a 2×2 covariance `[[a, b], [b, c]]` centred at (x, y).
    static func ellipse(x: Double, y: Double, a: Double, b: Double, c: Double, _ fr: Frame) -> String {
        let half = 0.5 * (a + c), root = ((0.5 * (a - c)) * (0.5 * (a - c)) + b * b).squareRoot()
        let l1 = max(half + root, 0), l2 = max(half - root, 0)
        let angle = atan2(l1 - a, b == 0 ? 1e-12 : b)
        let sx = (fr.width - 2 * fr.margin) / (fr.x1 - fr.x0)
        let rx = 2 * l1.squareRoot() * sx, ry = 2 * l2.squareRoot() * sx
        let degrees = -angle * 180 / .pi
        return "<ellipse class='sigma' cx='\(f(fr.px(x)))' cy='\(f(fr.py(y)))' rx='\(f(max(rx, 1)))' ry='\(f(max(ry, 1)))' transform='rotate(\(f(degrees)) \(f(fr.px(x))) \(f(fr.py(y))))'/>"
    }

    static func map(_ data: ReportData, _ o: ReportData.ObjectTrack, horizontal: Bool) -> String {
        // Top-down: (x, −z) so that "forward" (−Z) is up the page; side: (x, y).
        func project(_ v: Vector3) -> (Double, Double) { horizontal ? (v.x, -v.z) : (v.x, v.y) }
        let device = data.devicePath.map(project)
        let truths = o.truths.map(project)
        let estimates = o.samples.compactMap { $0.estimate.worldTransform.map { project($0.translation) } }
        let final = o.finalMoments.map { [project($0.meanInWorld)] } ?? []
        let fr = Frame.equal(device + truths + estimates + final)
        var s = "<svg xmlns='http://www.w3.org/2000/svg' width='\(Int(fr.width))' height='\(Int(fr.height))' role='img'>"
        s += axes(fr, xLabel: "X (m, right)", yLabel: horizontal ? "−Z (m, ahead)" : "Y (m, up)")
        s += polyline(device, fr, cls: "device")
        if let start = device.first { s += "<circle class='start' cx='\(f(fr.px(start.0)))' cy='\(f(fr.py(start.1)))' r='4'/>" }
        s += polyline(estimates, fr, cls: "trail")
        if let m = o.finalMoments {
            // The engine's final estimate, published or not (hollow while not converged).
            let p = project(m.meanInWorld)
            let c = m.covariance
            s += horizontal ? ellipse(x: p.0, y: p.1, a: c.m00, b: -c.m02, c: c.m22, fr) : ellipse(x: p.0, y: p.1, a: c.m00, b: c.m01, c: c.m11, fr)
            let published = o.samples.last?.estimate.worldTransform != nil
            s += "<circle class='\(published ? "estimate" : "pending")' cx='\(f(fr.px(p.0)))' cy='\(f(fr.py(p.1)))' r='4'/>"
        }
        for t in truths.suffix(1) {
            s += "<path class='truth' d='M\(f(fr.px(t.0) - 6)),\(f(fr.py(t.1) - 6)) l12,12 m0,-12 l-12,12'/>"
        }
        return s + "</svg>"
    }

    static func timeSeries(_ data: ReportData, series: [(String, [(Double, Double)])], yLabel: String) -> String {
        let ys = series.flatMap { $0.1.map(\.1) }
        let lo = ys.min() ?? 0, hi = ys.max() ?? 1
        let fr = Frame(x0: 0, x1: max(data.end, 1), y0: lo - 0.05 * max(hi - lo, 1), y1: hi + 0.05 * max(hi - lo, 1))
        var s = "<svg xmlns='http://www.w3.org/2000/svg' width='\(Int(fr.width))' height='\(Int(fr.height))' role='img'>"
        s += axes(fr, xLabel: "time (s)", yLabel: yLabel)
        for (cls, points) in series {
            // Break the line where the output was not published (gaps over 0.5 s).
            var run: [(Double, Double)] = []
            for p in points {
                if let last = run.last, p.0 - last.0 > 0.5 { s += polyline(run, fr, cls: cls); run = [] }
                run.append(p)
            }
            s += polyline(run, fr, cls: cls)
        }
        return s + "</svg>"
    }

    static func color(_ status: ConvergenceStatus) -> String {
        switch status {
        case .unknown: return "#9aa0a6"
        case .converged: return "#2e7d32"
        case .notConverged(let r):
            if r.contains(.insufficientLighting) { return "#6a1b9a" }
            if r.contains(.insufficientMovement) { return "#e65100" }
            if r.contains(.insufficientHorizontalSweep) { return "#f9a825" }
            if r.contains(.insufficientSignalStrength) { return "#b71c1c" }
            return "#1565c0"
        }
    }

    static func describe(_ s: ConvergenceStatus) -> String {
        if case .notConverged(let r) = s { return "notConverged: " + r.names.joined(separator: ", ") }
        return s.name
    }

    static func timeline(_ data: ReportData, _ spans: [(Double, ConvergenceStatus)], title: String) -> String {
        let width = 900.0, left = 110.0
        let scale = (width - left - 10) / max(data.end, 1)
        var s = "<svg xmlns='http://www.w3.org/2000/svg' width='\(Int(width))' height='34' role='img'>"
        s += "<text x='4' y='21' class='label'>\(escape(title))</text>"
        for (k, span) in spans.enumerated() {
            let t1 = k + 1 < spans.count ? spans[k + 1].0 : data.end
            s += "<rect x='\(f(left + span.0 * scale))' y='6' width='\(f(max((t1 - span.0) * scale, 1)))' height='22' fill='\(color(span.1))'>"
            s += "<title>\(f(span.0))–\(f(t1)) s: \(escape(describe(span.1)))</title></rect>"
        }
        return s + "</svg>"
    }

    static func render(_ data: ReportData) -> String {
        var html = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>NearbyFusion report — \(escape(data.recording))</title>
        <style>
        body{font:14px/1.4 system-ui,-apple-system,sans-serif;margin:24px;color:#202124;background:#fff}
        h1{font-size:20px} h2{font-size:17px;margin-top:28px} .row{display:flex;flex-wrap:wrap;gap:16px}
        figure{margin:0;max-width:440px} figcaption{font-size:12px;color:#5f6368}
        .plot{fill:#fafafa;stroke:#dadce0} .tick{font-size:10px;fill:#5f6368} .label{font-size:11px;fill:#3c4043}
        .device{fill:none;stroke:#1a73e8;stroke-width:1.2} .trail{fill:none;stroke:#fb8c00;stroke-width:1;stroke-dasharray:3 2}
        .start{fill:#1a73e8} .estimate{fill:#e65100} .pending{fill:#fff;stroke:#e65100;stroke-width:2} .truth{stroke:#000;stroke-width:2.5;fill:none}
        .sigma{fill:rgba(230,81,0,.15);stroke:#e65100;stroke-width:1}
        .est{fill:none;stroke:#e65100;stroke-width:1.5} .true{fill:none;stroke:#000;stroke-width:1;stroke-dasharray:4 3}
        .raw{fill:none;stroke:#90a4ae;stroke-width:1}
        table{border-collapse:collapse} td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}
        .key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
        </style></head><body>
        <h1>NearbyFusion — \(escape((data.recording as NSString).lastPathComponent))</h1>
        <p>\(escape(data.recording)) · \(String(format: "%.1f", data.end)) s · \(data.objects.count) object(s). Times are seconds from the recording's start.</p>
        <p class="key">Timeline:<span style="background:#9aa0a6"></span>unknown<span style="background:#e65100"></span>move
        <span style="background:#f9a825"></span>sweep sideways<span style="background:#1565c0"></span>sweep up and down
        <span style="background:#6a1b9a"></span>lighting<span style="background:#b71c1c"></span>signal
        <span style="background:#2e7d32"></span>converged</p>
        """
        if !data.sessionChanges.isEmpty {
            html += timeline(data, [(0, ConvergenceStatus.unknown)] + data.sessionChanges, title: "session")
        }
        for o in data.objects.prefix(ReportData.detailedObjects) {
            html += "<h2>Object \(escape(o.id))</h2>"
            let last = o.samples.last?.estimate
            var rows: [(String, String)] = [("updates", "\(o.samples.count)")]
            if let c = o.samples.first(where: { $0.estimate.convergence?.status.isConverged == true }) { rows.append(("first converged", "\(f(c.time)) s")) }
            if let a = last?.horizontalAngle { rows.append(("final horizontalAngle", String(format: "%.1f°", Angle.degrees(radians: a)))) }
            if let v = last?.verticalDirectionEstimate { rows.append(("final vertical estimate", v.rawValue)) }
            if let w = last?.worldTransform, let t = o.truths.last { rows.append(("final position error", String(format: "%.1f cm", (w.translation - t).length * 100))) }
            html += "<table>" + rows.map { "<tr><th>\($0.0)</th><td>\(escape($0.1))</td></tr>" }.joined() + "</table>"
            html += "<div class='row'><figure>\(map(data, o, horizontal: true))<figcaption>Top-down (X–Z). Blue: device path (dot: start); orange: estimated position with its 2σ ellipse (hollow while not converged; dashed: published history); ✕: truth.</figcaption></figure>"
            html += "<figure>\(map(data, o, horizontal: false))<figcaption>Side view (X–Y, height up).</figcaption></figure></div>"
            let angle = o.samples.compactMap { s in s.estimate.horizontalAngle.map { (s.time, Angle.degrees(radians: $0)) } }
            let trueAngle = o.samples.compactMap { s in s.trueHorizontalAngle.map { (s.time, Angle.degrees(radians: $0)) } }
            let distance = o.samples.compactMap { s in s.estimate.distance.map { (s.time, $0) } }
            let trueDistance = o.samples.compactMap { s in s.trueDistance.map { (s.time, $0) } }
            html += "<div class='row'><figure>\(timeSeries(data, series: [("true", trueAngle), ("est", angle)], yLabel: "horizontalAngle (°)"))<figcaption>horizontalAngle: orange published, dashed truth.</figcaption></figure>"
            html += "<figure>\(timeSeries(data, series: [("true", trueDistance), ("est", distance)], yLabel: "distance (m)"))<figcaption>distance: orange published, dashed truth.</figcaption></figure></div>"
            var spans: [(Double, ConvergenceStatus)] = []
            for s in o.samples { if let st = s.estimate.convergence?.status, spans.last?.1 != st { spans.append((s.time, st)) } }
            if !spans.isEmpty {
                html += timeline(data, spans, title: "convergence")
                html += "<table><tr><th>from (s)</th><th>status</th></tr>" + spans.map { "<tr><td>\(f($0.0))</td><td>\(escape(describe($0.1)))</td></tr>" }.joined() + "</table>"
            } else {
                html += "<p>No convergence reported (camera assistance off).</p>"
            }
        }
        if data.objects.count > ReportData.detailedObjects {
            html += summaryTable(Array(data.objects.dropFirst(ReportData.detailedObjects)))
        }
        return html + "</body></html>\n"
    }

    /// One row per object beyond the detailed ones: what a user checks first.
    static func summaryTable(_ objects: [ReportData.ObjectTrack]) -> String {
        var html = "<h2>\(objects.count) more objects, summarised</h2><p>The first \(ReportData.detailedObjects) objects are drawn in full above; "
            + "the others get one row each, so that the page stays small.</p>"
            + "<table><tr><th>object</th><th>updates</th><th>first converged (s)</th><th>final horizontalAngle</th>"
            + "<th>final vertical estimate</th><th>final position error</th></tr>"
        html.reserveCapacity(objects.count * 160)
        for o in objects {
            let e = o.lastEstimate
            let angle = e?.horizontalAngle.map { String(format: "%.1f°", Angle.degrees(radians: $0)) } ?? "—"
            let error = e?.worldTransform.flatMap { w in o.lastTruth.map { Figure.text((w.translation - $0).scaledLength * 100, decimals: 1) + " cm" } } ?? "—"
            html += "<tr><td>\(escape(o.id))</td><td>\(o.updates)</td><td>\(o.firstConverged.map(f) ?? "never")</td><td>\(angle)</td>"
                + "<td>\(e?.verticalDirectionEstimate?.rawValue ?? "—")</td><td>\(error)</td></tr>"
        }
        return html + "</table>"
    }
}
