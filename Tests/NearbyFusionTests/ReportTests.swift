import Foundation
import Testing

/// The HTML report is one self-contained file. (That it renders in a real browser is
/// checked by `.ci/check-report`, which installs Debian's Chromium.)
@Suite("report")
struct ReportTests {
    @Test func reportIsSelfContainedWithThePromisedFigures() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString).html").path
        let result = try CommandLineTests.run(["report", "Datasets/two-tags.jsonl", "--output", output])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: output, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(!html.contains("<script") && !html.contains("<link") && !html.contains("<img"))
        // No URL but the SVG namespace.
        let urls = html.components(separatedBy: "http").dropFirst().map { "http" + $0.prefix(28) }
        #expect(urls.allSatisfy { $0.hasPrefix("http://www.w3.org/2000/svg") })
        // Per object: two maps, two time series and a timeline; an ellipse for the estimate.
        #expect(html.components(separatedBy: "<svg").count - 1 == 10)
        #expect(html.contains("<ellipse class='sigma'"))
        #expect(html.contains("Object keys") && html.contains("Object bag"))
        #expect(html.contains("notConverged: insufficientMovement"))
    }
}
