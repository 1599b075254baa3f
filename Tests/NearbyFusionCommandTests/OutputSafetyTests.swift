import Foundation
import Testing
#if canImport(Glibc)
import Glibc
import TestHelpers
#endif

/// What the commands do to the paths a user names as outputs: replace regular files
/// atomically, write into devices and FIFOs in place, follow links, and never leave a
/// half-written or a temporary file behind. Everything happens in a fresh temporary folder.
@Suite("outputs never harm what the user names")
struct OutputSafetyTests {
    static let recording = "Datasets/still-phone.jsonl"

    /// A fresh folder in the tests' scratch folder (``Scratch``).
    static func folder() throws -> String {
        let url = Scratch.directory.appendingPathComponent("outputs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    static func fileStatus(_ path: String, followingLinks: Bool = true) -> stat? {
        var status = stat()
        let result = followingLinks ? stat(path, &status) : lstat(path, &status)
        return result == 0 ? status : nil
    }

    static func kind(_ path: String, followingLinks: Bool = true) -> mode_t? {
        fileStatus(path, followingLinks: followingLinks).map { $0.st_mode & S_IFMT }
    }

    /// What each command writes with its output option, on the same shipped recording.
    static let commands: [(name: String, arguments: @Sendable (String) -> [String], expected: String)] = [
        ("replay --output", { ["replay", recording, "--output", $0] }, "{\"t\":"),
        ("replay --tum", { ["replay", "Datasets/coached-sweep.jsonl", "--tum", $0] }, " "),
        ("report --output", { ["report", recording, "--output", $0] }, "<!DOCTYPE html>"),
        ("simulate --output", { ["simulate", "--scenario", "still-phone", "--output", $0] }, "{\"type\":\"header\""),
    ]

    @Test(arguments: 0..<commands.count)
    func anExistingFileIsReplacedWholeKeepingItsPermissions(command: Int) throws {
        let dir = try Self.folder()
        let target = dir + "/out"
        try "old content\n".write(toFile: target, atomically: false, encoding: .utf8)
        chmod(target, 0o640)
        let before = try #require(Self.fileStatus(target))
        let result = try TestSupport.run(Self.commands[command].arguments(target))
        #expect(result.status == 0, "\(result.stderr)")
        let after = try #require(Self.fileStatus(target))
        #expect(after.st_mode & 0o7777 == 0o640)
        #expect(after.st_ino != before.st_ino, "written in place, not by rename")
        let text = try String(contentsOfFile: target, encoding: .utf8)
        #expect(!text.contains("old content") && text.contains(Self.commands[command].expected))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out"], "a temporary file was left behind")
    }

    @Test(arguments: 0..<commands.count)
    func aSymbolicLinkIsFollowedAndKept(command: Int) throws {
        let dir = try Self.folder()
        try FileManager.default.createDirectory(atPath: dir + "/elsewhere", withIntermediateDirectories: true)
        try "old\n".write(toFile: dir + "/elsewhere/target", atomically: false, encoding: .utf8)
        #expect(symlink("elsewhere/target", dir + "/link") == 0)
        let result = try TestSupport.run(Self.commands[command].arguments(dir + "/link"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.kind(dir + "/link", followingLinks: false) == S_IFLNK, "the link was replaced")
        let text = try String(contentsOfFile: dir + "/elsewhere/target", encoding: .utf8)
        #expect(text.contains(Self.commands[command].expected))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/elsewhere") == ["target"])
    }

    @Test func aDanglingLinkGetsItsTargetCreated() throws {
        let dir = try Self.folder()
        #expect(symlink("made-by-replay.jsonl", dir + "/link") == 0)
        let result = try TestSupport.run(["replay", Self.recording, "--output", dir + "/link"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.kind(dir + "/link", followingLinks: false) == S_IFLNK)
        #expect(try String(contentsOfFile: dir + "/made-by-replay.jsonl", encoding: .utf8).hasPrefix("{\"t\":"))
    }

    @Test func aFailedCommandLeavesTheOldFileAsItWas() throws {
        let dir = try Self.folder()
        let target = dir + "/estimates.jsonl"
        try "keep me\n".write(toFile: target, atomically: false, encoding: .utf8)
        // Valid at first, broken at the last line: the replay fails after writing estimates.
        let good = try String(contentsOfFile: TestSupport.packageRoot.appendingPathComponent(Self.recording).path, encoding: .utf8)
        let bad = dir + "/bad.jsonl"
        try (good + "{\"type\":\"uwb\",\"t\":1e9,\"object\":\"tag\",\"distance\":\"far\"}\n").write(toFile: bad, atomically: false, encoding: .utf8)
        let result = try TestSupport.run(["replay", bad, "--output", target])
        #expect(result.status == 1)
        #expect(result.stderr.contains("key 'distance'"))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["bad.jsonl", "estimates.jsonl"])
    }

    @Test func aFIFOIsWrittenIntoAndStaysAFIFO() throws {
        let dir = try Self.folder()
        let fifo = dir + "/pipe"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The reader opens the FIFO as a shell's `cat pipe` would, and reads to the end.
        let received = Received()
        let reader = Thread {
            guard let handle = FileHandle(forReadingAtPath: fifo) else { return }
            received.set(handle.readDataToEndOfFile())
        }
        reader.start()
        let result = try TestSupport.run(["replay", Self.recording, "--output", fifo])
        #expect(result.status == 0, "\(result.stderr)")
        let text = String(decoding: received.wait(), as: UTF8.self)
        #expect(text.split(separator: "\n").count == 61 && text.hasPrefix("{\"t\":"))
        #expect(Self.kind(fifo) == S_IFIFO)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["pipe"])
    }

    @Test func aCharacterDeviceIsWrittenIntoAndStaysADevice() throws {
        // A pseudo-terminal's secondary side is a character device this test owns: the
        // command must open and write it, not put a regular file in its place.
        let primary = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(primary >= 0)
        defer { close(primary) }
        var unlock: Int32 = 0, number: UInt32 = 0
        try #require(ioctl(primary, Self.unlockPseudoTerminal, &unlock) == 0)
        try #require(ioctl(primary, Self.pseudoTerminalNumber, &number) == 0)
        let device = "/dev/pts/\(number)"
        try #require(Self.kind(device) == S_IFCHR)
        // This test holds the device open for the command's whole run, so that the primary
        // side reads everything and then, once the last holder closes, end of input (EIO).
        let held = open(device, O_RDWR | O_NOCTTY)
        try #require(held >= 0)
        let received = Received()
        let reader = Thread {
            var data = Data()
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(primary, &chunk, chunk.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                data.append(contentsOf: chunk[0..<n])
            }
            received.set(data)
        }
        reader.start()
        let result = try TestSupport.run(["replay", Self.recording, "--output", device])
        close(held)
        #expect(result.status == 0, "\(result.stderr)")
        let text = String(decoding: received.wait(), as: UTF8.self)
        #expect(text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("{\"t\":") }.count == 61)
        #expect(Self.kind(device) == S_IFCHR)
    }

    /// Linux's `TIOCSPTLCK` and `TIOCGPTN` (what `unlockpt` and `ptsname` do).
    static let unlockPseudoTerminal: UInt = 0x4004_5431
    static let pseudoTerminalNumber: UInt = 0x8004_5430

    @Test func aDirectoryIsRefusedByName() throws {
        let dir = try Self.folder()
        let result = try TestSupport.run(["replay", Self.recording, "--output", dir])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: \(dir): is a directory, not a file to write\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test func aNewFileIsCreatedWithTheUmaskAndNothingElse() throws {
        let dir = try Self.folder()
        let result = try TestSupport.run(["simulate", "--scenario", "still-phone", "--output", dir + "/new.jsonl"])
        #expect(result.status == 0, "\(result.stderr)")
        let mask = umask(0o022); umask(mask)
        #expect(Self.fileStatus(dir + "/new.jsonl").map { $0.st_mode & 0o777 } == 0o666 & ~mask)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["new.jsonl"])
    }

    @Test func noTestNamesASystemPathAsAnOutput() throws {
        // Tests and CI may run as root: a test that wrote to /dev/null by path, with a
        // command that replaced files, broke the machine it ran on.
        let tests = TestSupport.packageRoot.appendingPathComponent("Tests")
        let pattern = try Regex(#"\"--(output|tum|truth-tum)\"\s*,\s*\"/(dev|etc|usr|bin|proc|sys)/"#)
        let files = FileManager.default.enumerator(atPath: tests.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        #expect(files.count > 30)
        for name in files {
            let text = try String(contentsOf: tests.appendingPathComponent(name), encoding: .utf8)
            #expect(text.firstMatch(of: pattern) == nil, "\(name) writes to a system path")
        }
    }
}

/// Data handed from a reader thread to the test, once.
final class Received: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock(); data = value; condition.signal(); condition.unlock()
    }

    /// The data, or nothing after `seconds` (a command that replaced the FIFO leaves its
    /// reader blocked: the test then fails instead of hanging).
    func wait(seconds: Double = 60) -> Data {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while data == nil { if !condition.wait(until: deadline) { return Data() } }
        return data!
    }
}
