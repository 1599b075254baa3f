import Foundation
import NearbyFusionRecording

/// What the test targets share: where the package and its data are, how to run the built
/// commands, and where to write files (``Scratch``). A target of its own, not a product.
public enum TestSupport {
    /// The package's root folder.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The shipped recordings.
    public static let datasets = packageRoot.appendingPathComponent("Datasets")

    /// The built `nearby-fusion` command, beside the test bundle.
    public static var executable: URL { program("nearby-fusion") }

    /// A built product of the package, beside the test bundle.
    public static func program(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// What a program did.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs the command (or `program`) in the package's root; `standardInput` names a file
    /// (relative to the package) to feed it; `environment` adds variables to the test
    /// process's own.
    public static func run(_ arguments: [String], standardInput: String? = nil, program: URL? = nil,
                           environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = program ?? executable
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let standardInput {
            process.standardInput = try FileHandle(forReadingFrom: packageRoot.appendingPathComponent(standardInput))
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Writes `text` to a new file named `name` in a folder of its own under ``Scratch``, and
    /// returns its path.
    public static func temporaryFile(_ text: String, name: String = "recording.jsonl") throws -> String {
        let dir = Scratch.directory.appendingPathComponent("nearby-fusion-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// The error message reading `text` as a recording produces (the folder left out), or
    /// `nil` if it reads cleanly.
    public static func readingError(_ text: String) throws -> String? {
        let path = try temporaryFile(text)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/"
        do { _ = try RecordingReader.readAll(path: path); return nil } catch {
            return error.description.replacingOccurrences(of: directory, with: "")
        }
    }
}
