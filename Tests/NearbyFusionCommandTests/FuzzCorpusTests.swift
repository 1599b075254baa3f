import Foundation
import Testing
import TestHelpers

/// The saved fuzz corpus as a regression test: every seed (and every input a fuzzing run
/// once found and saved there) goes through its target — for the recording reader, the fast
/// and the strict decoder must agree — in the `nearby-fusion-fuzz` replayer, built without
/// the fuzzer (`.ci/fuzz` runs libFuzzer itself).
@Suite("fuzz corpus")
struct FuzzCorpusTests {
    static let corpus = TestSupport.packageRoot.appendingPathComponent("Tests/FuzzCorpus")

    @Test(arguments: ["decoders", "script", "coaching", "tokens", "datasets", "replay", "evaluate", "report", "coach", "merge", "archive"])
    func everySavedInputPassesItsTarget(target: String) throws {
        let folder = Self.corpus.appendingPathComponent(target)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { folder.appendingPathComponent($0).path }
        #expect(!files.isEmpty)
        let process = Process()
        process.executableURL = TestSupport.executable.deletingLastPathComponent().appendingPathComponent("nearby-fusion-fuzz")
        process.arguments = [target] + files
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("\(target): \(files.count) inputs, no finding"))
    }
}
