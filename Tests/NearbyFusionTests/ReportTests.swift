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
        let recording = try RecordingTests.temporaryFile(lines.joined(separator: "\n") + "\n", name: "many.jsonl")
        let output = recording + ".html"
        let result = try CommandLineTests.run(["report", recording, "--output", output])
        #expect(result.status == 0, "\(result.stderr)")
        let html = try String(contentsOfFile: output, encoding: .utf8)
        #expect(html.components(separatedBy: "<h2>Object ").count - 1 == 50)
        #expect(html.contains("<h2>250 more objects, summarised</h2>"))
        #expect(html.components(separatedBy: "<tr><td>tag").count - 1 == 250)
        #expect(html.contains("<tr><td>tag299</td><td>1</td>"))
        #expect(html.utf8.count < 1_000_000)
    }
}
