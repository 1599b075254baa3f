import Foundation
import NearbyFusion
import NearbyFusionRecording

/// Renders the report: plain HTML, inline CSS and SVG, no scripts, no external resources.
///
/// Every time plot and the coaching lanes share one horizontal frame (`timeFrame`): the
/// same left margin, width and time range, so that a moment lines up down the page. Ticks are
/// round numbers (1, 2 or 5 × 10ᵏ), at most six per axis, so that labels never crowd.
public enum ReportHTML {
    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func f(_ x: Double) -> String { String(format: "%.1f", x) }

    // MARK: Frames and axes

    /// A linear map from data coordinates to SVG pixels.
    struct Frame {
        var x0, x1, y0, y1: Double
        var width = 440.0, height = 300.0
        var left = 52.0, right = 16.0, top = 28.0, bottom = 40.0
        func px(_ x: Double) -> Double { left + (x - x0) / max(x1 - x0, 1e-9) * (width - left - right) }
        func py(_ y: Double) -> Double { height - bottom - (y - y0) / max(y1 - y0, 1e-9) * (height - top - bottom) }
        /// Pixels per data unit along x.
        var xScale: Double { (width - left - right) / max(x1 - x0, 1e-9) }

        /// Equal scale on both axes around the given points (for maps), with `pad` metres
        /// of margin.
        static func equal(_ points: [(Double, Double)], width: Double = 440, height: Double = 320, pad: Double = 0.5) -> Frame {
            var fr = Frame(x0: 0, x1: 1, y0: 0, y1: 1, width: width, height: height)
            var minX = points.map(\.0).min() ?? 0, maxX = points.map(\.0).max() ?? 1
            var minY = points.map(\.1).min() ?? 0, maxY = points.map(\.1).max() ?? 1
            minX -= pad; maxX += pad; minY -= pad; maxY += pad
            let w = width - fr.left - fr.right, h = height - fr.top - fr.bottom
            let s = max((maxX - minX) / w, (maxY - minY) / h)
            let cx = (minX + maxX) / 2, cy = (minY + maxY) / 2
            fr.x0 = cx - s * w / 2; fr.x1 = cx + s * w / 2
            fr.y0 = cy - s * h / 2; fr.y1 = cy + s * h / 2
            return fr
        }
    }

    /// Round tick values covering `lo…hi`: the step is 1, 2 or 5 × 10ᵏ, the smallest giving at
    /// most `count` + 1 ticks. The ticks are counted before they are made, `lo + i × step` for
    /// `i` in `0…n`, so that no span — however wide, or so far from zero that adding the step
    /// no longer moves a value — makes more than `count` + 2 of them; a span that is not a
    /// finite positive number gets its two ends alone.
    static func niceTicks(_ lo: Double, _ hi: Double, count: Int = 5) -> (step: Double, ticks: [Double]) {
        guard lo.isFinite, hi.isFinite else { return (1, [lo, hi].filter(\.isFinite)) }
        let span = max(hi - lo, 1e-9)
        let raw = span / Double(count)
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
        let first = (lo / step).rounded(.up) * step
        guard span.isFinite, step.isFinite, step > 0, first.isFinite else { return (span, [lo, hi]) }
        let steps = ((hi + 1e-9 * step - first) / step).rounded(.down)
        guard steps.isFinite, steps >= 0 else { return (step, []) }
        let n = Int(min(steps, Double(count + 1)))
        let ticks = (0...n).map { i -> Double in
            let v = first + Double(i) * step
            return abs(v) < 1e-12 * step ? 0 : v
        }
        return (step, ticks)
    }

    /// A tick label with as many decimals as the step needs.
    static func tickLabel(_ v: Double, step: Double) -> String {
        let decimals = max(0, Int(-log10(step).rounded(.down)))
        return String(format: "%.\(decimals)f", v)
    }

    /// The plot area, round ticks with light grid lines, and the axis labels.
    static func axes(_ fr: Frame, xLabel: String, yLabel: String) -> String {
        var s = "<rect x='\(f(fr.left))' y='\(f(fr.top))' width='\(f(fr.width - fr.left - fr.right))' height='\(f(fr.height - fr.top - fr.bottom))' class='plot'/>"
        let xt = niceTicks(fr.x0, fr.x1, count: fr.width > 600 ? 10 : 5), yt = niceTicks(fr.y0, fr.y1, count: 5)
        for x in xt.ticks {
            s += "<line class='grid' x1='\(f(fr.px(x)))' x2='\(f(fr.px(x)))' y1='\(f(fr.top))' y2='\(f(fr.height - fr.bottom))'/>"
            s += "<text x='\(f(fr.px(x)))' y='\(f(fr.height - fr.bottom + 14))' class='tick' text-anchor='middle'>\(tickLabel(x, step: xt.step))</text>"
        }
        for y in yt.ticks {
            s += "<line class='grid' x1='\(f(fr.left))' x2='\(f(fr.width - fr.right))' y1='\(f(fr.py(y)))' y2='\(f(fr.py(y)))'/>"
            s += "<text x='\(f(fr.left - 5))' y='\(f(fr.py(y) + 4))' class='tick' text-anchor='end'>\(tickLabel(y, step: yt.step))</text>"
        }
        s += "<text x='\(f(fr.left + (fr.width - fr.left - fr.right) / 2))' y='\(f(fr.height - 8))' class='label' text-anchor='middle'>\(escape(xLabel))</text>"
        let cy = fr.top + (fr.height - fr.top - fr.bottom) / 2
        s += "<text x='14' y='\(f(cy))' class='label' text-anchor='middle' transform='rotate(-90 14 \(f(cy)))'>\(escape(yLabel))</text>"
        return s
    }

    /// A legend along the top of a plot: one swatch per entry, in the entry's CSS class.
    static func legend(_ fr: Frame, _ entries: [(cls: String, label: String)]) -> String {
        var s = "", x = fr.left
        for (cls, label) in entries {
            if cls.hasPrefix("band") {
                s += "<rect class='\(cls)' x='\(f(x))' y='8' width='18' height='10'/>"
            } else {
                s += "<line class='\(cls)' x1='\(f(x))' x2='\(f(x + 18))' y1='13' y2='13'/>"
            }
            s += "<text x='\(f(x + 22))' y='17' class='tick'>\(escape(label))</text>"
            x += 34 + Double(label.count) * 6
        }
        return s
    }

    static func polyline(_ points: [(Double, Double)], _ fr: Frame, cls: String) -> String {
        guard !points.isEmpty else { return "" }
        return "<polyline class='\(cls)' points='" + points.map { "\(f(fr.px($0.0))),\(f(fr.py($0.1)))" }.joined(separator: " ") + "'/>"
    }

    /// Polylines broken where consecutive points are more than `gap` seconds apart (the output
    /// was not published in between).
    static func brokenLines(_ points: [(Double, Double)], _ fr: Frame, cls: String, gap: Double = 0.5) -> String {
        var s = "", run: [(Double, Double)] = []
        for p in points {
            if let last = run.last, p.0 - last.0 > gap { s += polyline(run, fr, cls: cls); run = [] }
            run.append(p)
        }
        return s + polyline(run, fr, cls: cls)
    }

    /// A band between `lower` and `upper` over time, `(t, lower, upper)`, broken at gaps.
    static func band(_ points: [(Double, Double, Double)], _ fr: Frame, cls: String, gap: Double = 0.5) -> String {
        var s = "", run: [(Double, Double, Double)] = []
        func flush() {
            guard run.count > 1 else { run = []; return }
            let upper = run.map { "\(f(fr.px($0.0))),\(f(fr.py($0.2)))" }
            let lower = run.reversed().map { "\(f(fr.px($0.0))),\(f(fr.py($0.1)))" }
            s += "<polygon class='\(cls)' points='" + (upper + lower).joined(separator: " ") + "'/>"
            run = []
        }
        for p in points {
            if let last = run.last, p.0 - last.0 > gap { flush() }
            run.append(p)
        }
        flush()
        return s
    }

    /// The 2σ ellipse of a 2×2 covariance `[[a, b], [b, c]]` centred at (x, y).
    static func ellipse(x: Double, y: Double, a: Double, b: Double, c: Double, _ fr: Frame) -> String {
        let half = 0.5 * (a + c), root = ((0.5 * (a - c)) * (0.5 * (a - c)) + b * b).squareRoot()
        let l1 = max(half + root, 0), l2 = max(half - root, 0)
        let angle = atan2(l1 - a, b == 0 ? 1e-12 : b)
        let rx = 2 * l1.squareRoot() * fr.xScale, ry = 2 * l2.squareRoot() * fr.xScale
        let degrees = -angle * 180 / .pi
        return "<ellipse class='sigma' cx='\(f(fr.px(x)))' cy='\(f(fr.py(y)))' rx='\(f(max(rx, 1)))' ry='\(f(max(ry, 1)))' transform='rotate(\(f(degrees)) \(f(fr.px(x))) \(f(fr.py(y))))'/>"
    }

    // MARK: Maps

    /// A map of the device path, the truth and the estimate: top-down (`horizontal`, X and −Z
    /// so that ahead is up the page) or side (X and Y). `zoom` frames only the object's
    /// neighbourhood (the truth, the estimate and its 2σ ellipse).
    static func map(_ data: ReportData, _ o: ReportData.ObjectTrack, index: Int, horizontal: Bool, zoom: Bool = false) -> String {
        func project(_ v: Vector3) -> (Double, Double) { horizontal ? (v.x, -v.z) : (v.x, v.y) }
        let device = data.devicePath.map(project)
        let truths = o.truths.map(project)
        let estimates = o.samples.compactMap { $0.estimate.worldTransform.map { project($0.translation) } }
        let final = o.finalMoments.map { [project($0.meanInWorld)] } ?? []
        let fr: Frame
        if zoom {
            let sigma = o.finalMoments.map { 2 * max($0.covariance.m00, $0.covariance.m22, 0).squareRoot() } ?? 0
            fr = Frame.equal(truths.suffix(1) + final + estimates.suffix(20), width: 300, pad: max(0.15, sigma))
        } else {
            fr = Frame.equal(device + truths + estimates + final)
        }
        var s = "<svg xmlns='http://www.w3.org/2000/svg' class='map' width='\(Int(fr.width))' height='\(Int(fr.height))' role='img'>"
        let clip = "clip-\(zoom ? "zoom" : (horizontal ? "top" : "side"))-\(index)"
        s += "<defs><clipPath id='\(clip)'><rect x='\(f(fr.left))' y='\(f(fr.top))' width='\(f(fr.width - fr.left - fr.right))' height='\(f(fr.height - fr.top - fr.bottom))'/></clipPath></defs>"
        s += axes(fr, xLabel: "X (m, right)", yLabel: horizontal ? "−Z (m, ahead)" : "Y (m, up)")
        // Each new piece of guidance, as an arrow from where the device was (top-down only).
        let steps = horizontal && !zoom ? guidanceSteps(o) : []
        s += legend(fr, zoom ? [("est", "estimate, 2σ"), ("truthkey", "truth")]
                    : [("device", "device path"), ("trail", "published estimates"), ("truthkey", "truth")] + (steps.isEmpty ? [] : [("guidance", "guidance")]))
        s += "<g clip-path='url(#\(clip))'>"
        if !zoom {
            s += polyline(device, fr, cls: "device")
            if let start = device.first { s += "<circle class='start' cx='\(f(fr.px(start.0)))' cy='\(f(fr.py(start.1)))' r='4'/>" }
            if !steps.isEmpty {
                let marker = "guidance-head-\(index)"
                s += "<defs><marker id='\(marker)' markerWidth='8' markerHeight='8' refX='7' refY='4' orient='auto'>"
                    + "<path class='guidancehead' d='M0,0 L8,4 L0,8 z'/></marker></defs>"
                for (time, origin, displacement, text) in steps {
                    let a = project(origin), b = project(origin + displacement)
                    s += "<line class='guidance' x1='\(f(fr.px(a.0)))' y1='\(f(fr.py(a.1)))' x2='\(f(fr.px(b.0)))' y2='\(f(fr.py(b.1)))' "
                        + "marker-end='url(#\(marker))'><title>\(f(time)) s: \(escape(text))</title></line>"
                }
            }
        }
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
        return s + "</g></svg>"
    }

    /// Every new piece of guidance (a change of direction or distance), the first
    /// ``maximumGuidanceArrows``: when, from where, the step in the world, and its words.
    static func guidanceSteps(_ o: ReportData.ObjectTrack) -> [(Double, Vector3, Vector3, String)] {
        var out: [(Double, Vector3, Vector3, String)] = []
        var last: MotionGuidance?
        for sample in o.samples {
            let g = sample.estimate.guidance
            defer { last = g }
            guard let g, let step = sample.guidanceInWorld, g.differs(from: last) else { continue }
            out.append((sample.time, step.origin, step.displacement, g.advice))
            if out.count == maximumGuidanceArrows { break }
        }
        return out
    }

    /// The most guidance arrows a map draws (the page stays bounded with many objects).
    static let maximumGuidanceArrows = 12

    /// The published guidance over time, in one lane, a colour per direction (its name in
    /// each bar's title); `nil` when there was none.
    static func guidanceLanes(_ data: ReportData, _ o: ReportData.ObjectTrack) -> String? {
        guard o.samples.contains(where: { $0.estimate.guidance != nil }) else { return nil }
        let colours: [MotionGuidance.Direction: String] = [.left: "#8e24aa", .right: "#5e35b1", .forward: "#00897b", .back: "#6d4c41",
                                                           .up: "#f4511e", .down: "#3949ab"]
        var spans: [(Double, Double, String, String)] = []
        for direction in MotionGuidance.Direction.allCases {
            spans += runs(data, o.samples, { $1.estimate.guidance?.direction }, direction, name: "move \(direction.rawValue)",
                          colour: colours[direction] ?? "#8e24aa")
        }
        return lanes(data, [("guidance", spans.sorted { $0.0 < $1.0 })])
    }

    // MARK: Time plots

    /// The horizontal frame every time plot and the coaching lanes share.
    static func timeFrame(_ data: ReportData, height: Double) -> Frame {
        Frame(x0: 0, x1: max(data.end, 1), y0: 0, y1: 1, width: 900, height: height, left: 150, right: 16, top: 26, bottom: 38)
    }

    /// A time plot of `lines` (CSS class, label, points) over an optional `band`
    /// (class, label, `(t, lower, upper)`), its y range rounded out to ticks.
    static func timePlot(_ data: ReportData, lines: [(cls: String, label: String, points: [(Double, Double)])],
                         band bandSeries: (cls: String, label: String, points: [(Double, Double, Double)])? = nil,
                         yLabel: String, zeroLine: Bool = false) -> String {
        var ys = lines.flatMap { $0.points.map(\.1) }
        if let b = bandSeries { ys += b.points.flatMap { [$0.1, $0.2] } }
        if zeroLine { ys.append(0) }
        var fr = timeFrame(data, height: 210)
        let lo = ys.min() ?? 0, hi = ys.max() ?? 1
        let step = niceTicks(lo, hi == lo ? lo + 1 : hi).step
        fr.y0 = (lo / step).rounded(.down) * step
        fr.y1 = max((hi / step).rounded(.up) * step, fr.y0 + step)
        var s = "<svg xmlns='http://www.w3.org/2000/svg' class='timeplot' width='\(Int(fr.width))' height='\(Int(fr.height))' role='img'>"
        s += axes(fr, xLabel: "time (s)", yLabel: yLabel)
        s += legend(fr, (bandSeries.map { [($0.cls, $0.label)] } ?? []) + lines.map { ($0.cls, $0.label) })
        if let b = bandSeries { s += band(b.points, fr, cls: b.cls) }
        if zeroLine { s += "<line class='zero' x1='\(f(fr.left))' x2='\(f(fr.width - fr.right))' y1='\(f(fr.py(0)))' y2='\(f(fr.py(0)))'/>" }
        for line in lines { s += brokenLines(line.points, fr, cls: line.cls) }
        if ys.isEmpty { s += "<text x='\(f(fr.left + 12))' y='\(f(fr.top + 24))' class='label'>nothing published</text>" }
        return s + "</svg>"
    }

    /// Lanes over the shared time axis, one per `(label, spans)`: a bar wherever the lane's
    /// condition holds, `(from, to, colour, tooltip)`.
    static func lanes(_ data: ReportData, _ rows: [(label: String, spans: [(Double, Double, String, String)])]) -> String {
        let laneHeight = 16.0, gap = 4.0
        var fr = timeFrame(data, height: 26 + Double(rows.count) * (laneHeight + gap) + 38)
        fr.y0 = 0; fr.y1 = Double(rows.count)
        var s = "<svg xmlns='http://www.w3.org/2000/svg' class='lanes' width='\(Int(fr.width))' height='\(Int(fr.height))' role='img'>"
        s += "<rect x='\(f(fr.left))' y='\(f(fr.top))' width='\(f(fr.width - fr.left - fr.right))' height='\(f(fr.height - fr.top - fr.bottom))' class='plot'/>"
        let xt = niceTicks(fr.x0, fr.x1, count: 10)
        for x in xt.ticks {
            s += "<line class='grid' x1='\(f(fr.px(x)))' x2='\(f(fr.px(x)))' y1='\(f(fr.top))' y2='\(f(fr.height - fr.bottom))'/>"
            s += "<text x='\(f(fr.px(x)))' y='\(f(fr.height - fr.bottom + 14))' class='tick' text-anchor='middle'>\(tickLabel(x, step: xt.step))</text>"
        }
        s += "<text x='\(f(fr.left + (fr.width - fr.left - fr.right) / 2))' y='\(f(fr.height - 8))' class='label' text-anchor='middle'>time (s)</text>"
        for (k, row) in rows.enumerated() {
            let y = fr.top + gap / 2 + Double(k) * (laneHeight + gap)
            s += "<text x='\(f(fr.left - 6))' y='\(f(y + 12))' class='tick' text-anchor='end'>\(escape(row.label))</text>"
            for (t0, t1, colour, tip) in row.spans {
                s += "<rect x='\(f(fr.px(t0)))' y='\(f(y))' width='\(f(max((t1 - t0) * fr.xScale, 1)))' height='\(f(laneHeight))' fill='\(colour)'>"
                s += "<title>\(f(t0))–\(f(t1)) s: \(escape(tip))</title></rect>"
            }
        }
        return s + "</svg>"
    }

    /// The coaching lanes: `converged`, then one lane per reason, so that reasons that hold
    /// at once show at once.
    static func coachingLanes(_ data: ReportData, _ spans: [(Double, ConvergenceStatus)]) -> String {
        let reasons: [(ConvergenceReasons, String, String)] = [
            (.insufficientMovement, "move the phone", "#e65100"),
            (.insufficientHorizontalSweep, "sweep sideways", "#f9a825"),
            (.insufficientVerticalSweep, "sweep up and down", "#1565c0"),
            (.insufficientLighting, "more light", "#6a1b9a"),
            (.insufficientSignalStrength, "signal", "#b71c1c"),
        ]
        func intervals(_ holds: (ConvergenceStatus) -> Bool, colour: String) -> [(Double, Double, String, String)] {
            spans.enumerated().compactMap { k, span in
                guard holds(span.1) else { return nil }
                let t1 = k + 1 < spans.count ? spans[k + 1].0 : data.end
                return (span.0, t1, colour, describe(span.1))
            }
        }
        var rows = [(label: String, spans: [(Double, Double, String, String)])]()
        rows.append(("converged", intervals({ $0.isConverged }, colour: "#2e7d32")))
        rows.append(("unknown", intervals({ $0 == .unknown }, colour: "#9aa0a6")))
        for (reason, label, colour) in reasons {
            rows.append((label, intervals({ if case .notConverged(let r) = $0 { return r.contains(reason) } else { return false } }, colour: colour)))
        }
        return lanes(data, rows)
    }

    /// The spans of the samples over which `value` equals `category`, each to the next
    /// sample (the last to the end of the recording), with `colour` and `category`'s name.
    static func runs<T: Equatable>(_ data: ReportData, _ samples: [ReportData.Sample], _ value: (Int, ReportData.Sample) -> T?,
                                   _ category: T, name: String, colour: String) -> [(Double, Double, String, String)] {
        var out: [(Double, Double, String, String)] = []
        var start: Double?
        for (k, sample) in samples.enumerated() {
            let holds = value(k, sample) == category
            let next = k + 1 < samples.count ? samples[k + 1].time : data.end
            if holds, start == nil { start = sample.time }
            if let s = start, !holds || k == samples.count - 1 {
                out.append((s, holds ? next : sample.time, colour, name))
                start = nil
            }
        }
        return out
    }

    /// The published vertical estimate over time, one lane per category, against the truth's.
    static func verticalLanes(_ data: ReportData, _ o: ReportData.ObjectTrack) -> String {
        var rows = [(label: String, spans: [(Double, Double, String, String)])]()
        for category in [VerticalDirectionEstimate.above, .same, .below, .aboveOrBelow, .unknown] {
            rows.append(("estimate: \(category.rawValue)", runs(data, o.samples, { $1.estimate.verticalDirectionEstimate }, category,
                                                                  name: category.rawValue, colour: "#e65100")))
        }
        if o.samples.contains(where: { $0.trueVertical != nil }) {
            for category in [VerticalDirectionEstimate.above, .same, .below] {
                rows.append(("truth: \(category.rawValue)", runs(data, o.samples, { $1.trueVertical }, category,
                                                               name: category.rawValue, colour: "#202124")))
            }
        }
        return lanes(data, rows)
    }

    /// The published `motion` over time, one lane per state, against whether the truth moves
    /// (as `evaluate` scores it); `nil` when the object never published a motion.
    static func motionLanes(_ data: ReportData, _ o: ReportData.ObjectTrack) -> String? {
        guard o.samples.contains(where: { $0.estimate.motion != nil }) else { return nil }
        var rows = [(label: String, spans: [(Double, Double, String, String)])]()
        for (state, colour) in [(MotionActivityState.moving, "#c62828"), (.stationary, "#2e7d32"), (.unknown, "#9aa0a6")] {
            rows.append(("estimate: \(state.rawValue)", runs(data, o.samples, { $1.estimate.motion }, state, name: state.rawValue, colour: colour)))
        }
        // The truth's motion as `evaluate` scores it (``ObjectEvaluation/truthMotion(times:positions:)``),
        // over the samples that have a truth.
        var truthMoving = [Bool?](repeating: nil, count: o.samples.count)
        let withTruth = o.samples.indices.filter { o.samples[$0].truth != nil }
        let motion = ObjectEvaluation.truthMotion(times: withTruth.map { o.samples[$0].time }, positions: withTruth.map { o.samples[$0].truth! })
        for (k, m) in zip(withTruth, motion) { truthMoving[k] = m }
        if truthMoving.contains(true) {
            rows.append(("truth: moving", runs(data, o.samples, { k, _ in truthMoving[k] }, true, name: "moving", colour: "#202124")))
        }
        return lanes(data, rows)
    }

    static func describe(_ s: ConvergenceStatus) -> String {
        if case .notConverged(let r) = s { return "notConverged: " + r.names.joined(separator: ", ") }
        return s.name
    }
}

// MARK: The page

extension ReportHTML {
    static let style = """
    body{font:14px/1.4 system-ui,-apple-system,sans-serif;margin:24px;color:#202124;background:#fff}
    h1{font-size:20px} h2{font-size:17px;margin-top:32px} h3{font-size:14px;margin:18px 0 4px}
    .row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
    figure{margin:0} figcaption{font-size:12px;color:#5f6368;max-width:900px}
    .plot{fill:#fafafa;stroke:#dadce0} .grid{stroke:#eceff1;stroke-width:1} .zero{stroke:#9e9e9e;stroke-width:1}
    .tick{font-size:10px;fill:#5f6368} .label{font-size:11px;fill:#3c4043}
    .device{fill:none;stroke:#1a73e8;stroke-width:1.2} .trail{fill:none;stroke:#fb8c00;stroke-width:1;stroke-dasharray:3 2} .guidance{stroke:#8e24aa;stroke-width:1.6} .guidancehead{fill:#8e24aa}
    .start{fill:#1a73e8} .estimate{fill:#e65100} .pending{fill:#fff;stroke:#e65100;stroke-width:2}
    .truth{stroke:#000;stroke-width:2.5;fill:none} .truthkey{stroke:#000;stroke-width:2.5}
    .sigma{fill:rgba(230,81,0,.15);stroke:#e65100;stroke-width:1}
    .est{fill:none;stroke:#e65100;stroke-width:1.5} .true{fill:none;stroke:#000;stroke-width:1;stroke-dasharray:4 3}
    .raw{fill:none;stroke:#78909c;stroke-width:1} .band{fill:rgba(230,81,0,.15);stroke:none}
    table{border-collapse:collapse;font-size:13px} td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}
    td.n{text-align:right;font-variant-numeric:tabular-nums}
    """

    /// The self-contained page (inline SVG and CSS, no network) of `data`.
    public static func render(_ data: ReportData) -> String {
        var html = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>NearbyFusion report — \(escape(data.recording))</title>
        <style>\(style)</style></head><body>
        <h1>NearbyFusion — \(escape((data.recording as NSString).lastPathComponent))</h1>
        <p>\(escape(data.recording)) · \(String(format: "%.1f", data.end)) s · \(data.objects.count) object(s). Times are seconds from the recording's start; every time plot below shares one time axis.</p>
        """
        html += deviceTable(data)
        html += evaluationTable(data)
        if !data.sessionChanges.isEmpty {
            html += "<h3>Session</h3>" + coachingLanes(data, [(0, ConvergenceStatus.unknown)] + data.sessionChanges)
        }
        for (k, o) in data.objects.prefix(ReportData.detailedObjects).enumerated() {
            html += objectSection(data, o, index: k)
        }
        if data.objects.count > ReportData.detailedObjects {
            html += summaryTable(Array(data.objects.dropFirst(ReportData.detailedObjects)))
        }
        return html + "</body></html>\n"
    }

    /// The device and its capabilities, as the recording's header gives them.
    static func deviceTable(_ data: ReportData) -> String {
        guard let h = data.header else { return "" }
        let c = h.capabilities
        func yes(_ b: Bool) -> String { b ? "yes" : "no" }
        var rows: [(String, String)] = [("device", h.deviceName),
                                        ("precise distance (UWB)", yes(c.supportsPreciseDistanceMeasurement)),
                                        ("direction", yes(c.supportsDirectionMeasurement)),
                                        ("elevation", yes(c.supportsElevationMeasurement)),
                                        ("camera assistance", yes(c.supportsCameraAssistance)),
                                        ("Bluetooth Channel Sounding", yes(c.supportsBluetoothChannelSounding))]
        let objects = h.objects.map { "\($0.id) (\($0.kind.rawValue), \(h.ranging(of: $0.id).rawValue))" }
        rows.append(("objects", objects.prefix(8).joined(separator: ", ") + (objects.count > 8 ? ", …" : "")))
        return "<h2>Device</h2><table>" + rows.map { "<tr><th>\(escape($0.0))</th><td>\(escape($0.1))</td></tr>" }.joined() + "</table>"
    }

    /// The figures of `evaluate` for each object, when the recording has truth.
    static func evaluationTable(_ data: ReportData) -> String {
        guard let evaluation = data.evaluation, !evaluation.objects.isEmpty else {
            return "<h2>Evaluation</h2><p>No truth in this recording: nothing to score.</p>"
        }
        func n(_ x: Double?, _ decimals: Int) -> String { Figure.text(x, decimals: decimals) }
        func percent(_ x: Double?) -> String { x.map { String(format: "%.0f%%", $0 * 100) } ?? "—" }
        var html = "<h2>Evaluation</h2><table><tr><th>object</th><th>updates</th><th>angle err median °</th><th>p95 °</th>"
            + "<th>position err median m</th><th>p95 m</th><th>converged after s</th><th>angle available</th>"
            + "<th>transform available</th><th>CRLB √tr m</th><th>RMSE/CRLB</th><th>mean NEES</th><th>false converged</th></tr>"
        for e in evaluation.objects.prefix(ReportData.detailedObjects) {
            html += "<tr><td>\(escape(e.object))</td><td class='n'>\(e.updates)</td>"
                + "<td class='n'>\(n(e.horizontalAngleErrorDegrees?.median, 2))</td><td class='n'>\(n(e.horizontalAngleErrorDegrees?.p95, 2))</td>"
                + "<td class='n'>\(n(e.positionErrorMetres?.median, 3))</td><td class='n'>\(n(e.positionErrorMetres?.p95, 3))</td>"
                + "<td class='n'>\(n(e.timeToConvergenceSeconds, 1))</td><td class='n'>\(percent(e.availability["horizontalAngle"]))</td>"
                + "<td class='n'>\(percent(e.availability["worldTransform"]))</td><td class='n'>\(n(e.crlbPositionMetres, 3))</td>"
                + "<td class='n'>\(n(e.rmseOverCRLB, 2))</td><td class='n'>\(n(e.meanNEES, 2))</td><td class='n'>\(n(e.falseConvergedRate, 3))</td></tr>"
        }
        html += "</table><p class='tick'>The same figures as <code>nearby-fusion evaluate</code> prints for this recording.</p>"
        // The radio itself, in a table of its own (the page is as wide as the one above).
        html += "<table><tr><th>object</th><th>range error median m</th><th>robust σ m</th><th>correlation after 1 s</th><th>ranges</th>"
            + "<th>|distance err| median m: raw</th><th>published</th><th>published distance lag s</th></tr>"
        for e in evaluation.objects.prefix(ReportData.detailedObjects) {
            guard let r = e.rangeError else { continue }
            html += "<tr><td>\(escape(e.object))</td><td class='n'>\(n(r.medianMetres, 3))</td>"
                + "<td class='n'>\(n(r.robustStandardDeviationMetres, 3))</td><td class='n'>\(n(r.correlationAfterOneSecond, 2))</td>"
                + "<td class='n'>\(r.count)</td><td class='n'>\(n(e.distanceError?.rawMedianMetres, 3))</td>"
                + "<td class='n'>\(n(e.distanceError?.publishedMedianMetres, 3))</td><td class='n'>\(n(e.distanceError?.lagSeconds, 2))</td></tr>"
        }
        return html + "</table><p class='tick'>The radio's own ranges against the truth: a bias shows in the median; a correlation "
            + "near 1 means errors that last, which no filter that weighs ranges as independent allows for. Beside them, the "
            + "published distance's error and its lag behind the truth.</p>"
    }

    /// One object: its maps, then its time plots on the shared axis.
    static func objectSection(_ data: ReportData, _ o: ReportData.ObjectTrack, index k: Int) -> String {
        var html = "<h2>Object \(escape(o.id))</h2>"
        let last = o.samples.last?.estimate
        var rows: [(String, String)] = [("updates", "\(o.samples.count)")]
        if let c = o.samples.first(where: { $0.estimate.convergence?.status.isConverged == true }) { rows.append(("first converged", "\(f(c.time)) s")) }
        if let a = last?.horizontalAngle { rows.append(("final horizontalAngle", String(format: "%.1f°", Angle.degrees(radians: a)))) }
        if let v = last?.verticalDirectionEstimate { rows.append(("final vertical estimate", v.rawValue)) }
        if let w = last?.worldTransform, let t = o.truths.last { rows.append(("final position error", String(format: "%.1f cm", (w.translation - t).length * 100))) }
        html += "<table>" + rows.map { "<tr><th>\($0.0)</th><td>\(escape($0.1))</td></tr>" }.joined() + "</table>"
        html += "<div class='row'><figure>\(map(data, o, index: k, horizontal: true))<figcaption>Top-down (X–Z); the dot marks the path's start; the filled circle is the final estimate with its 2σ ellipse (hollow while not converged).</figcaption></figure>"
        html += "<figure>\(map(data, o, index: k, horizontal: true, zoom: true))<figcaption>Zoomed top-down view of the object's neighbourhood.</figcaption></figure>"
        html += "<figure>\(map(data, o, index: k, horizontal: false))<figcaption>Side view (X–Y, height up).</figcaption></figure></div>"

        let samples = o.samples
        let degrees = { (x: Double) in Angle.degrees(radians: x) }
        let angle = samples.compactMap { s in s.estimate.horizontalAngle.map { (s.time, degrees($0)) } }
        let rawAngle = samples.compactMap { s in s.rawHorizontalAngle.map { (s.time, degrees($0)) } }
        let trueAngle = samples.compactMap { s in s.trueHorizontalAngle.map { (s.time, degrees($0)) } }
        html += "<h3>Horizontal angle</h3>" + timePlot(data, lines: [("raw", "radio's own angle", rawAngle), ("true", "truth", trueAngle), ("est", "horizontalAngle (fused)", angle)], yLabel: "angle (°)")
        // Error of the engine's bearing (published or not) against its 2σ.
        var angleError: [(Double, Double)] = [], angleBand: [(Double, Double, Double)] = []
        for s in samples {
            guard let truth = s.trueHorizontalAngle, let sigma = s.bearingSigma, let published = s.estimate.horizontalAngle else { continue }
            let e = degrees(Angle.wrapped(published - truth))
            angleError.append((s.time, e))
            angleBand.append((s.time, -2 * degrees(sigma), 2 * degrees(sigma)))
        }
        if !trueAngle.isEmpty {
            html += "<h3>Horizontal angle error</h3>"
            // No published angle, no error: a sentence, not an empty plot.
            html += angleError.isEmpty ? "<p>No horizontalAngle was published, so there is no error to plot.</p>"
                : timePlot(data, lines: [("est", "published − truth", angleError)], band: ("band", "filter's ±2σ", angleBand), yLabel: "error (°)", zeroLine: true)
        }
        let distance = samples.compactMap { s in s.estimate.distance.map { (s.time, $0) } }
        let rawDistance = samples.compactMap { s in s.rawDistance.map { (s.time, $0) } }
        let trueDistance = samples.compactMap { s in s.trueDistance.map { (s.time, $0) } }
        html += "<h3>Distance</h3>" + timePlot(data, lines: [("raw", "radio's range", rawDistance), ("true", "truth", trueDistance), ("est", "distance (published)", distance)], yLabel: "distance (m)")
        var positionError: [(Double, Double)] = [], positionBand: [(Double, Double, Double)] = []
        for s in samples {
            guard let truth = s.truth, let m = s.moments else { continue }
            positionError.append((s.time, (m.meanInWorld - truth).length))
            positionBand.append((s.time, 0, 2 * max(m.covariance.trace, 0).squareRoot()))
        }
        if !positionError.isEmpty {
            html += "<h3>Position error</h3>" + timePlot(data, lines: [("est", "‖estimate − truth‖", positionError)], band: ("band", "filter's 2√tr P", positionBand), yLabel: "error (m)")
        }
        html += "<h3>Vertical estimate</h3>" + verticalLanes(data, o)
        if let motion = motionLanes(data, o) { html += "<h3>Motion</h3>" + motion }
        if let guidance = guidanceLanes(data, o) { html += "<h3>Guidance</h3>" + guidance }
        var spans: [(Double, ConvergenceStatus)] = []
        for s in samples { if let st = s.estimate.convergence?.status, spans.last?.1 != st { spans.append((s.time, st)) } }
        if !spans.isEmpty {
            html += "<h3>Convergence and coaching</h3>" + coachingLanes(data, spans)
            html += "<details><summary>status changes (\(spans.count))</summary><table><tr><th>from (s)</th><th>status</th></tr>"
                + spans.map { "<tr><td>\(f($0.0))</td><td>\(escape(describe($0.1)))</td></tr>" }.joined() + "</table></details>"
        } else {
            html += "<p>No convergence reported (camera assistance off).</p>"
        }
        return html
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
