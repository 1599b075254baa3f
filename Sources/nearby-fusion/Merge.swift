import ArgumentParser
import Foundation
import NearbyFusionEvaluation
import NearbyFusionRecording

/// Adds up the shards of a fleet evaluation (`evaluate FOLDER --shard K/N --json`).
struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge the --json documents of evaluate's shards into the fleet's total.",
        discussion: """
        Each document is the output of `evaluate FOLDER [--shard K/N] --json`; its `pool` (counts, \
        sums and error sketches) is added up. Every count, share, mean, RMSE and the worst lag come \
        out as one machine evaluating every recording would print them; medians and 95th \
        percentiles to within 0.5 % (logarithmic buckets of 1 %). Prints the total row of \
        evaluate's table, or with --json the merged pool and its total.
        """)

    @Argument(help: "The shards' JSON documents (`-` reads one from standard input).", completion: .file(extensions: ["json"]))
    var shards: [String]

    @Flag(help: "Print one JSON document (the merged pool and its total) instead of text.")
    var json = false

    struct Document: Decodable { var pool: EvaluationPool }
    struct VersionProbe: Decodable { struct Pool: Decodable { var version: Int }; var pool: Pool }
    struct Output: Encodable { var shards: Int; var pool: EvaluationPool; var total: ObjectEvaluation }

    func validate() throws {
        guard !shards.isEmpty else { throw ValidationError("give at least one shard document") }
    }

    func run() throws {
        var pool = EvaluationPool()
        for path in shards {
            if path != "-" { try InputFile.requireRegular(path, what: "a shard document") }
            let data: Data
            do {
                data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw CommandFailure(message: "\(path): \(RecordingError.cannotOpen(path))")
            }
            // The version first, so that a newer layout is named as such rather than as a
            // missing key.
            if let probe = try? JSONDecoder().decode(VersionProbe.self, from: data), probe.pool.version != 1 {
                throw CommandFailure(message: "\(path): key 'pool.version': unsupported version \(probe.pool.version) (this merge reads 1)")
            }
            let document: Document
            do { document = try JSONDecoder().decode(Document.self, from: data) } catch let error as DecodingError {
                throw CommandFailure(message: "\(path): not a shard of `evaluate FOLDER --json`: \(Self.describe(error))")
            }
            pool.merge(document.pool)
        }
        let total = pool.total()
        if json {
            print(try Evaluate.encode(Output(shards: shards.count, pool: pool, total: total)))
            return
        }
        print("\(shards.count) shard\(shards.count == 1 ? "" : "s"): \(pool.recordings) recordings evaluated, \(pool.skipped) skipped (no truth), \(pool.failed) failed")
        Evaluate.printTable([total])
    }

    /// A decoding error as `key 'a.b': what`.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String { keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") }
        switch error {
        case .keyNotFound(let key, let c): return "key '\(path(c.codingPath + [key]))': missing"
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return "key '\(path(c.codingPath))': \(c.debugDescription)"
        case .dataCorrupted(let c): return c.codingPath.isEmpty ? "invalid JSON" : "key '\(path(c.codingPath))': \(c.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
