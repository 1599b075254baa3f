import Foundation
import TestHelpers
import Testing

/// What a library user reads: every library module has its reference catalogue, and every
/// declaration a module makes `public` or `open` says what it is.
@Suite("reference documentation")
struct DocumentationTests {
    static let sources = TestSupport.packageRoot.appendingPathComponent("Sources")
    /// The command, the fuzz targets and the C shims are not libraries.
    static let notLibraries: Set<String> = ["nearby-fusion", "nearby-fusion-fuzz", "CLAPACK", "CMallocCounter", "CLibFuzzer"]

    static var libraryModules: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        return names.filter { !notLibraries.contains($0) && !$0.hasPrefix(".") }.sorted()
    }

    @Test func everyLibraryModuleHasAReferenceCatalogue() throws {
        #expect(Self.libraryModules.count >= 8)
        for module in Self.libraryModules {
            let catalogue = Self.sources.appendingPathComponent("\(module)/\(module).docc/\(module).md")
            #expect(FileManager.default.fileExists(atPath: catalogue.path), "\(module) has no \(module).docc/\(module).md")
        }
    }

    @Test func everyPublicDeclarationHasADocComment() throws {
        // A declaration with an explicit `public` or `open` (not `public init() {}`, not an
        // override) must follow a `///` line, attributes between them allowed.
        let declaration = try Regex(#"^\s*(@inlinable |@inline\(__always\) )?(public|open) "#)
        let exempt = try Regex(#"^\s*public (init\(\) \{\}|override)"#)
        var undocumented: [String] = []
        for module in Self.libraryModules {
            let folder = Self.sources.appendingPathComponent(module)
            let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
            for file in files {
                let lines = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                for (k, line) in lines.enumerated() where line.firstMatch(of: declaration) != nil && line.firstMatch(of: exempt) == nil {
                    var j = k - 1
                    while j >= 0 && lines[j].trimmingCharacters(in: .whitespaces).hasPrefix("@") { j -= 1 }
                    if j < 0 || !lines[j].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                        undocumented.append("\(module)/\(file):\(k + 1): \(line.trimmingCharacters(in: .whitespaces).prefix(80))")
                    }
                }
            }
        }
        #expect(undocumented.isEmpty, "\(undocumented.count) undocumented:\n\(undocumented.prefix(20).joined(separator: "\n"))")
    }
}
