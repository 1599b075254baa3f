import Foundation

/// Where tests write files: one folder per test process under the system's temporary
/// directory, removed with everything in it when the process exits. Each test still names
/// its own files uniquely inside it (tests run in parallel), but none is left behind: the
/// suite used to leave ~70 folders and ~50 files in `/tmp` on every run (14,000 after a few
/// hundred runs on a developer's machine).
public enum Scratch {
    /// The folder, made on first use; `exit` removes it (`atexit`). A test process that
    /// crashes leaves it, named `nearby-fusion-tests-<pid>-…` so that it can be found.
    public static let directory: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("nearby-fusion-tests-\(getpid())-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        } catch {
            fatalError("cannot make the tests' scratch folder \(url.path): \(error)")
        }
        atexit { try? FileManager.default.removeItem(at: Scratch.directory) }
        return url
    }()
}
