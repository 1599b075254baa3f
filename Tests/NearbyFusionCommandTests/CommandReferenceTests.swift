import Foundation
import Testing
import TestHelpers

/// `Documentation/Commands.md` is what the command prints for `--help`, so that the reference
/// cannot drift from the command (`bash Scripts/update-command-reference` rewrites it).
@Suite("command reference")
struct CommandReferenceTests {
    static let subcommands = ["replay", "evaluate", "merge", "coach", "report", "simulate", "convert", "accuracy", "bench"]

    static func help(_ arguments: [String]) throws -> String {
        try TestSupport.run(arguments, environment: ["COLUMNS": "100"]).stdout
    }

    @Test func theReferenceIsWhatTheCommandPrints() throws {
        var expected = "# The nearby-fusion command\n\nGenerated from `nearby-fusion help` by `bash Scripts/update-command-reference`.\n\n"
        expected += "```\n" + (try Self.help(["--help"])) + "```\n"
        for sub in Self.subcommands {
            expected += "\n## \(sub)\n\n```\n" + (try Self.help(["help", sub])) + "```\n"
        }
        let file = TestSupport.packageRoot.appendingPathComponent("Documentation/Commands.md")
        let actual = try String(contentsOf: file, encoding: .utf8)
        #expect(actual == expected, "run: bash Scripts/update-command-reference")
    }

    @Test func theHelpSpeaksOfTheDomainOnly() throws {
        // No development words: issue numbers, sessions of work, commit hashes, dates.
        let text = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("Documentation/Commands.md"), encoding: .utf8)
        for word in try [Regex(#"(?i)\bissues?\b"#), Regex(#"\b[0-9a-f]{7,40}\b"#), Regex(#"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b"#)] {
            #expect(text.firstMatch(of: word) == nil, "\(String(describing: text.firstMatch(of: word)?.output))")
        }
        #expect(Self.subcommands.allSatisfy { text.contains("## \($0)\n") })
    }
}
