import Foundation
import NearbyFusion
import NearbyFusionRecording
import Testing
import TestHelpers

/// The JSON Schema of the recording and estimate formats (`Schemas/nearby-recording.schema.json`)
/// against what the project ships and writes, checked by the reference validator for draft
/// 2020-12, Python's `jsonschema` (skipped, with the reason, where it is not installed).
@Suite("JSON Schema of the formats")
struct SchemaTests {
    static let schema = TestSupport.packageRoot.appendingPathComponent("Schemas/nearby-recording.schema.json")

    /// Whether `python3` with `jsonschema` ≥ 4 (draft 2020-12) can be run here.
    static let validatorAvailable: Bool = {
        guard let result = try? python(["-c", "import jsonschema; jsonschema.Draft202012Validator"]) else { return false }
        return result.status == 0
    }()

    /// Validates each line of every file against one of the schema's definitions; prints one
    /// line per invalid line (file, line number, the validator's message) and a count.
    static let script = """
        import json, sys, jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        definition = sys.argv[2]
        validator = jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": "#/$defs/" + definition}]})
        lines = invalid = 0
        for path in sys.argv[3:]:
            for number, line in enumerate(open(path, encoding="utf-8"), 1):
                lines += 1
                for error in validator.iter_errors(json.loads(line)):
                    invalid += 1
                    print(f"{path}:{number}: {error.message[:200]}")
                    break
        print(f"{lines} lines, {invalid} invalid")
        """

    static func python(_ arguments: [String]) throws -> TestSupport.Result {
        try TestSupport.run(["python3"] + arguments, program: URL(fileURLWithPath: "/usr/bin/env"))
    }

    static func validate(_ files: [String], as definition: String) throws -> TestSupport.Result {
        try python(["-c", script, schema.path, definition] + files)
    }

    static var shippedRecordings: [String] {
        let folder = TestSupport.packageRoot.appendingPathComponent("Datasets")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted().map { folder.appendingPathComponent($0).path }
    }

    @Test(.enabled(if: validatorAvailable, "needs python3 with jsonschema ≥ 4 (Debian: python3-jsonschema)"))
    func everyShippedRecordingIsValid() throws {
        let files = Self.shippedRecordings
        #expect(files.count >= 19)
        let result = try Self.validate(files, as: "recordingLine")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasSuffix(" lines, 0 invalid\n"), "\(result.stdout)")
    }

    @Test(.enabled(if: validatorAvailable, "needs python3 with jsonschema ≥ 4 (Debian: python3-jsonschema)"))
    func everyReplaysEstimateStreamIsValid() throws {
        var outputs: [String] = []
        for recording in Self.shippedRecordings {
            var text = ""
            _ = try RecordingReplay.run(path: recording) { text += $0.jsonLine + "\n" }
            let name = URL(fileURLWithPath: recording).deletingPathExtension().lastPathComponent
            outputs.append(try TestSupport.temporaryFile(text, name: "\(name)-estimates.jsonl"))
        }
        let result = try Self.validate(outputs, as: "estimateLine")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasSuffix(" lines, 0 invalid\n"), "\(result.stdout)")
    }

    @Test(.enabled(if: validatorAvailable, "needs python3 with jsonschema ≥ 4 (Debian: python3-jsonschema)"))
    func theSchemaRejectsWhatTheReaderRejects() throws {
        // One bad line per rule the schema can state; each must be invalid.
        let recordingLines = [
            #"{"type":"header","format":"nearby-recording","version":2,"device":{},"objects":[]}"#,
            #"{"type":"pose","t":0,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"limited"}"#,
            #"{"type":"pose","t":0,"position":[0,1.4,2000000],"orientation":[0,0,0,1],"tracking":"normal"}"#,
            #"{"type":"uwb","t":1e11,"object":"tag","distance":1}"#,
            #"{"type":"uwb","t":1,"object":"tag","distance":1001}"#,
            #"{"type":"range","t":1,"object":"tag","direction":[0,0]}"#,
            #"{"type":"motionState","t":1,"object":"tag","state":"walking"}"#,
            #"{"type":"removed","t":1,"object":"tag","reason":"lost"}"#,
            #"{"type":"truth","object":"tag"}"#,
            #"{"type":"sensor","t":1}"#,
        ]
        let estimateLines = [
            #"{"t":1,"object":"tag","distance":1,"direction":null,"horizontalAngle":null,"verticalDirectionEstimate":"level","worldTransform":null,"convergence":null}"#,
            #"{"t":1,"object":"tag","distance":1,"direction":null,"horizontalAngle":null,"verticalDirectionEstimate":null,"worldTransform":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,-1000001,1],"convergence":null}"#,
            #"{"t":1,"convergence":{"status":"converged","reasons":["tooDark"]}}"#,
        ]
        for (definition, lines) in [("recordingLine", recordingLines), ("estimateLine", estimateLines)] {
            for line in lines {
                let file = try TestSupport.temporaryFile(line + "\n", name: "bad-line.jsonl")
                let result = try Self.validate([file], as: definition)
                #expect(result.stdout.hasSuffix("1 lines, 1 invalid\n"), "\(line) → \(result.stdout)\(result.stderr)")
            }
        }
    }
}
