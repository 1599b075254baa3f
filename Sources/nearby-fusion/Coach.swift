import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording

struct Coach: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the coaching a recording produces against an expectation file.",
        discussion: """
        Prints each expectation PASS or FAIL with what was reported instead. Exit code 0 only if \
        all pass; 2 if any fails; 1 if a file cannot be read. Format: the article 'Coaching \
        expectations' of NearbyFusionEvaluation's documentation; examples in Datasets/expectations/.
        """)

    @Argument(help: "A recording.", completion: .file(extensions: ["jsonl"]))
    var recording: String

    @Option(help: "The expectation file.", completion: .file(extensions: ["expect"]))
    var expect: String

    @OptionGroup var engine: EngineOptions

    func run() throws {
        guard let data = FileManager.default.contents(atPath: expect) else {
            throw CommandFailure(message: "\(expect): \(RecordingError.cannotOpen(expect))")
        }
        let verdicts: [CoachingVerdict]
        do {
            let expectations = try CoachingExpectation.parse(try RecordingError.utf8Text(data, file: expect), file: expect)
            guard !expectations.isEmpty else { throw CommandFailure(message: "\(expect): no expectations") }
            verdicts = try CoachingCheck.check(recording: recording, expectations: expectations, options: engine.fusionOptions)
        } catch let e as RecordingError {
            throw CommandFailure(message: e.description)
        } catch let e as ReplayError {
            throw CommandFailure(message: e.description)
        }
        for v in verdicts {
            let mark = v.passed ? "PASS" : "FAIL"
            var line = "\(mark)  line \(v.expectation.line): \(v.expectation.text)"
            line += v.passed ? "  (\(v.considered) in the window)" : "\n      \(v.detail)"
            print(line)
        }
        let failed = verdicts.filter { !$0.passed }.count
        print("\(verdicts.count - failed) passed, \(failed) failed")
        if failed > 0 { throw ExitCode(2) }
    }
}
