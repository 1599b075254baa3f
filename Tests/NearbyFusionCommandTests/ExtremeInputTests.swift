import Foundation
import NearbyFusion
import NearbyFusionRecording
import Testing
import TestHelpers

/// Recordings at the edges of what the format accepts: times no clock keeps, objects just past
/// the edge of the accepted frame, outputs that can be "never". Every command gives the same
/// verdict on them, sized by the number of events and never by a value read from the file.
@Suite("Extreme input: times, bounds and never")
struct ExtremeInputTests {
    /// A shipped recording with its last `count` lines' times replaced by `time`.
    static func withLastTimes(_ name: String, count: Int, replacedBy time: String) throws -> String {
        let text = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("Datasets/\(name)"), encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        let pattern = try Regex(#""t":[-+0-9.eE]+"#)
        for k in (lines.count - count)..<lines.count {
            lines[k] = lines[k].replacing(pattern, with: "\"t\":\(time)")
        }
        return try TestSupport.temporaryFile(lines.joined(separator: "\n") + "\n", name: "\(name)-\(count)-times.jsonl")
    }

    @Test func aTimeOfTheLargestDoubleIsRejectedAtItsLineByEveryCommand() throws {
        // The report sized its time axis's ticks by the span: 1.8e308 s aborted it after 42 s
        // asking for tens of gigabytes.
        let path = try Self.withLastTimes("coached-sweep.jsonl", count: 3, replacedBy: "1.7976931348623157e+308")
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        let commands: [[String]] = [
            ["replay", path, "--output", directory.appendingPathComponent("estimates.jsonl").path],
            ["evaluate", path, "--json"],
            ["report", path, "--output", directory.appendingPathComponent("report.html").path],
        ]
        for arguments in commands {
            let result = try TestSupport.run(arguments)
            #expect(result.status == 1, "\(arguments[0]): \(result.stderr)")
            #expect(result.stderr.contains("\(path):802: key 't': a time beyond 10000000000 s"), "\(arguments[0]): \(result.stderr)")
        }
        // The reader's two decoders agree (the fast one hands such a line to the strict one).
        #expect(throws: RecordingError.self) { _ = try RecordingReader.readAll(path: path) }
    }

    @Test func aReportOfTheWidestAcceptedSpanIsDrawnOnTheEventsAxis() throws {
        // Accepted (within 10¹⁰ s of the clock's origin): drawn, and the page stays the size
        // the events make it.
        let path = try Self.withLastTimes("coached-sweep.jsonl", count: 3, replacedBy: "9999999999.5")
        let output = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("wide.html")
        let result = try TestSupport.run(["report", path, "--output", output.path])
        #expect(result.status == 0, "\(result.stderr)")
        let size = try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int ?? 0
        let html = try String(contentsOf: output, encoding: .utf8)
        #expect(size > 0 && size < 1_000_000)
        #expect(!html.contains("nan") && !html.contains("inf'"))
    }

    @Test func aTimeThatCanBeNeverIsWrittenAsNull() throws {
        // The first 10 s of the coached step: the Cramér–Rao bound allows the Channel Sounding
        // angle only after 13 s, so "bound allows the angle after" is never — null, not absent
        // and not a number.
        let text = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("Datasets/cs-coached-step.jsonl"),
                              encoding: .utf8)
        var kept: [Substring] = []
        for line in text.split(separator: "\n") {
            if let range = line.firstRange(of: #""t":"#) {
                let number = line[range.upperBound...].prefix { "0123456789.-+eE".contains($0) }
                if let t = Double(number), t > 10 { break }
            }
            kept.append(line)
        }
        let path = try TestSupport.temporaryFile(kept.joined(separator: "\n") + "\n", name: "cs-first-10-s.jsonl")
        let result = try TestSupport.run(["evaluate", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""boundAllowsAngleAfterSeconds" : null"#), "\(result.stdout)")
        #expect(result.stdout.contains(#""convergenceLagSeconds" : null"#))
        let table = try TestSupport.run(["evaluate", path])
        #expect(table.stdout.contains("after never"), "\(table.stdout)")
    }

    @Test func nothingIsPublishedBeyondTheCoordinatesTheFormatAccepts() throws {
        // The coached sweep moved to the edge of the accepted frame: the phone 999,999 m from
        // the VIO origin, the tag 1.5 m further out. Its estimate would lie beyond ±1,000,000 m,
        // which no reader accepts back: it is withheld, and every other output stays.
        let text = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("Datasets/coached-sweep.jsonl"),
                              encoding: .utf8)
        var lines: [String] = []
        for line in text.split(separator: "\n") {
            if line.contains(#""type":"truth""#) { continue }
            guard line.contains(#""type":"pose""#), let open = line.firstRange(of: #""position":["#) else {
                lines.append(String(line)); continue
            }
            let rest = line[open.upperBound...]
            let x = try #require(Double(rest.prefix { $0 != "," }))
            lines.append(String(line[..<open.upperBound]) + "\(x - 999_999)" + rest.drop { $0 != "," })
        }
        let path = try TestSupport.temporaryFile(lines.joined(separator: "\n") + "\n", name: "edge.jsonl")
        var converged = 0, transforms = 0, distances = 0
        _ = try RecordingReplay.run(path: path) { line in
            guard case .object(let e) = line else { return }
            if e.convergence?.status.isConverged == true { converged += 1 }
            if let w = e.worldTransform {
                transforms += 1
                let p = w.translation
                #expect(max(abs(p.x), abs(p.y), abs(p.z)) <= NearbyObjectEstimate.largestCoordinateMetres)
            }
            if let d = e.distance { distances += 1; #expect(d <= NearbyObjectEstimate.largestDistanceMetres) }
        }
        #expect(converged > 50, "the sweep still converges")
        #expect(transforms == 0, "\(transforms) transforms beyond the bound")
        #expect(distances > 50)
    }
}
