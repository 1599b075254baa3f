import Foundation
import NearbyFusionEvaluation
import NearbyFusionRecording
import Testing
import TestHelpers

/// The HTML report is one self-contained file. (That it renders in a real browser is
/// checked by `.ci/check-report`, which installs Debian's Chromium.)
@Suite("report")
struct ReportTests {
    @Test func noShippedRecordingGetsAnEmptyTimePlot() throws {
        // A recording that never publishes an angle (still phone, dark room, camera assistance
        // off) drew an empty angle-error plot; it gets a sentence instead.
        let names = try FileManager.default.contentsOfDirectory(atPath: TestSupport.datasets.path).filter { $0.hasSuffix(".jsonl") }.sorted()
        #expect(names.count >= 18)
        for name in names {
            let output = Scratch.directory.appendingPathComponent("report-\(UUID().uuidString).html").path
            defer { try? FileManager.default.removeItem(atPath: output) }
            let result = try TestSupport.run(["report", "Datasets/\(name)", "--output", output])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            let html = try String(contentsOfFile: output, encoding: .utf8)
            for figure in html.components(separatedBy: "<svg").dropFirst() where figure.contains("class='timeplot'") {
                let body = figure[..<(figure.range(of: "</svg>")?.lowerBound ?? figure.endIndex)]
                #expect(body.contains("<polyline"), "\(name): an empty time plot")
            }
        }
    }

    @Test func aRecordingOnStandardInputGetsItsEvaluationTableToo() throws {
        // The table is scored in the same pass as the figures: standard input, read once,
        // gets the same table as the file (it was left out, the input being gone by then).
        let fromFile = Scratch.directory.appendingPathComponent("report-\(UUID().uuidString).html").path
        let fromInput = Scratch.directory.appendingPathComponent("report-\(UUID().uuidString).html").path
        defer { try? FileManager.default.removeItem(atPath: fromFile); try? FileManager.default.removeItem(atPath: fromInput) }
        #expect(try TestSupport.run(["report", "Datasets/coached-sweep.jsonl", "--output", fromFile]).status == 0)
        let piped = try TestSupport.run(["report", "-", "--output", fromInput], standardInput: "Datasets/coached-sweep.jsonl")
        #expect(piped.status == 0, "\(piped.stderr)")
        func table(_ path: String) throws -> String? {
            let html = try String(contentsOfFile: path, encoding: .utf8)
            guard let start = html.range(of: "<h2>Evaluation</h2>") else { return nil }
            let rest = html[start.lowerBound...]
            return rest.range(of: "</table>").map { String(rest[..<$0.upperBound]) }
        }
        let expected = try #require(try table(fromFile))
        let got = try #require(try table(fromInput))
        #expect(got == expected)
        // The radio against the truth, as `evaluate` prints it: the simulator's UWB is unbiased.
        let page = try String(contentsOfFile: fromFile, encoding: .utf8)
        #expect(page.contains("<th>range error median m</th>"))
        let report = try RecordingEvaluation.evaluate(path: TestSupport.packageRoot.appendingPathComponent("Datasets/coached-sweep.jsonl").path)
        let median = try #require(report.objects.first?.rangeError?.medianMetres)
        #expect(page.contains("<tr><td>tag</td><td class='n'>\(String(format: "%.3f", median))</td>"), "\(median)")
    }

    /// The motion lanes: the published `motion` against the truth's motion — the picked-up
    /// tag's carry shows as `moving` in both, the estimate's from 0.7 s after the pickup to
    /// 1.1 s after the put-down.
    @Test func theReportDrawsThePublishedMotionAgainstTheTruth() throws {
        let output = Scratch.directory.appendingPathComponent("report-\(UUID().uuidString).html").path
        let result = try TestSupport.run(["report", "Datasets/tag-picked-up.jsonl", "--output", output])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: output, encoding: .utf8)
        let motion = try #require(html.components(separatedBy: "<h3>Motion</h3>").dropFirst().first)
        let lanes = String(motion[..<(motion.range(of: "</svg>")?.lowerBound ?? motion.endIndex)])
        #expect(lanes.contains(">estimate: moving<") && lanes.contains(">estimate: stationary<") && lanes.contains(">truth: moving<"))
        #expect(lanes.contains("<title>11.8–15.6 s: moving</title>") && lanes.contains("<title>15.6–20.0 s: stationary</title>"), "\(lanes)")
        #expect(lanes.contains("<title>11.1–14.5 s: moving</title>"), "the truth moves from the pickup to the put-down (as evaluate scores it)")
        // A recording whose object publishes no motion (camera assistance off) has no lanes.
        let off = try TestSupport.run(["report", "Datasets/camera-assistance-off.jsonl", "--output", output])
        let offPage = try String(contentsOfFile: output, encoding: .utf8)
        #expect(off.status == 0 && !offPage.contains("<h3>Motion</h3>"))
    }

    /// A distance-only watch's report draws each new piece of guidance as an arrow on the
    /// top-down map (its time and words in its title), and the advice over time in a lane.
    @Test func reportDrawsTheGuidance() throws {
        let html = ReportHTML.render(try ReportData.collect(path: "Datasets/distance-only.jsonl"))
        let arrows = html.components(separatedBy: "marker-end='url(#guidance-head-").dropFirst()
        #expect(arrows.count >= 3 && arrows.count <= 12, "\(arrows.count) arrows")
        #expect(arrows.first?.contains("<title>0.3 s: move ") == true, "\(arrows.first?.prefix(200) ?? "")")
        #expect(html.contains("<h3>Guidance</h3>") && html.contains("move forward") && html.contains("move back"))
        // None for an object that never had any (a tag whose angle comes with its first sweep has some).
        let dark = ReportHTML.render(try ReportData.collect(path: "Datasets/dark-room.jsonl"))
        #expect(!dark.contains("<h3>Guidance</h3>"))
    }

    @Test func reportIsSelfContainedWithThePromisedFigures() throws {
        let output = Scratch.directory.appendingPathComponent("report-\(UUID().uuidString).html").path
        let result = try TestSupport.run(["report", "Datasets/two-tags.jsonl", "--output", output])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: output, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(!html.contains("<script") && !html.contains("<link") && !html.contains("<img"))
        // No URL but the SVG namespace.
        let urls = html.components(separatedBy: "http").dropFirst().map { "http" + $0.prefix(28) }
        #expect(urls.allSatisfy { $0.hasPrefix("http://www.w3.org/2000/svg") })
        // Per object: three maps (top-down, zoomed, side), four time plots (angle, its error,
        // distance, position error) and four lane charts (vertical estimate, motion, guidance, coaching).
        let svgs = html.components(separatedBy: "<svg").dropFirst().map { String($0.prefix { $0 != "\u{0}" }) }
        func count(_ cls: String) -> Int { svgs.filter { $0.hasPrefix(" xmlns='http://www.w3.org/2000/svg' class='\(cls)'") }.count }
        #expect(count("map") == 6 && count("timeplot") == 8 && count("lanes") == 8, "\(svgs.count) figures")
        #expect(html.contains("<ellipse class='sigma'"))
        #expect(html.contains("Object keys") && html.contains("Object bag"))
        #expect(html.contains("notConverged: insufficientMovement"))
        // At the top: the device's capabilities and the evaluation table.
        #expect(html.contains("<h2>Device</h2>") && html.contains("<h2>Evaluation</h2>") && html.contains("camera assistance"))
        for figure in svgs {
            let body = String(figure[..<(figure.range(of: "</svg>")?.lowerBound ?? figure.endIndex)])
            // No empty plot: every time plot draws a line, every map a path or a marker.
            if body.contains("class='timeplot'") { #expect(body.contains("<polyline"), "an empty time plot") }
            // Ticks: round numbers (a step of 1, 2 or 5 × 10ᵏ) whose labels never crowd (centres
            // at least 24 px apart along the x axis).
            var rows: [String: [(position: Double, value: Double)]] = [:]
            for piece in body.components(separatedBy: "<text x='").dropFirst() {
                guard let anchorRange = piece.range(of: "class='tick' text-anchor='") else { continue }
                let anchor = piece[anchorRange.upperBound...].prefix { $0 != "'" }
                let x = Double(piece.prefix { $0 != "'" }) ?? 0
                let y = Double(piece.components(separatedBy: "y='").dropFirst().first?.prefix { $0 != "'" } ?? "") ?? 0
                guard let open = piece.firstIndex(of: ">"), let value = Double(piece[piece.index(after: open)...].prefix { $0 != "<" }) else { continue }
                let key = anchor == "middle" ? "x@\(y)" : "y@\(x)"
                rows[key, default: []].append((anchor == "middle" ? x : y, value))
            }
            for (key, ticks) in rows where ticks.count > 1 {
                let values = ticks.map(\.value).sorted()
                let step = values[1] - values[0]
                let magnitude = pow(10, log10(step).rounded(.down))
                #expect([1.0, 2, 5, 10].contains { abs(step / magnitude - $0) < 1e-6 }, "step \(step) in \(key)")
                #expect(zip(values, values.dropFirst()).allSatisfy { abs($1 - $0 - step) < 1e-6 * max(1, step) }, "uneven ticks \(values)")
                if key.hasPrefix("x") {
                    let xs = ticks.map(\.position).sorted()
                    #expect(zip(xs, xs.dropFirst()).allSatisfy { $1 - $0 >= 24 }, "crowded ticks \(xs)")
                }
            }
        }
    }

}

/// The report stays bounded however many objects a recording has (issue 10, item 6).
@Suite("report size")
struct ReportSizeTests {
    @Test func objectsBeyondTheFirstFiftyAreSummarisedInOneTable() throws {
        let n = 300
        let ids = (0..<n).map { "tag\($0)" }
        var lines = [#"{"type":"header","format":"nearby-recording","version":1,"device":{"name":"phone"},"objects":["#
                     + ids.map { #"{"id":"\#($0)","kind":"accessory"}"# }.joined(separator: ",") + "]}"]
        for i in 0...30 {
            lines.append(#"{"type":"pose","t":\#(Double(i) / 30),"position":[\#(0.1 * Double(i) / 30),1.4,0],"orientation":[0,0,0,1],"tracking":"normal"}"#)
            if i == 15 { for id in ids { lines.append(#"{"type":"uwb","t":0.51,"object":"\#(id)","distance":3,"direction":null}"#) } }
        }
        let recording = try TestSupport.temporaryFile(lines.joined(separator: "\n") + "\n", name: "many.jsonl")
        let output = recording + ".html"
        let result = try TestSupport.run(["report", recording, "--output", output])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: output, encoding: .utf8)
        #expect(html.components(separatedBy: "<h2>Object ").count - 1 == 50)
        #expect(html.contains("<h2>250 more objects, summarised</h2>"))
        #expect(html.components(separatedBy: "<tr><td>tag").count - 1 == 250)
        #expect(html.contains("<tr><td>tag299</td><td>1</td>"))
        #expect(html.utf8.count < 1_200_000)
    }
}
