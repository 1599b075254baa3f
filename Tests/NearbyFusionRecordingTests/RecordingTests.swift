import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

@Suite("Recording format: round trips and validation")
struct RecordingTests {
    static let header = #"{"type":"header","format":"nearby-recording","version":1,"device":{"name":"phone","supportsPreciseDistanceMeasurement":true,"supportsDirectionMeasurement":true,"supportsCameraAssistance":true},"objects":[{"id":"tag","kind":"accessory"}]}"#

    @Test func simulatedRecordingRoundTripsExactly() throws {
        let scenario = ScenarioCatalogue.floorAbove(seed: 3)
        let events = Simulator.events(for: scenario)
        let path = try TestSupport.temporaryFile(Simulator.recordingText(for: scenario))
        let read = try RecordingReader.readAll(path: path)
        #expect(read.count == events.count)
        #expect(read == events, "first difference at \(read.indices.first { read[$0] != events[$0] } ?? -1)")
        // Writing what was read gives the same bytes.
        let rewritten = read.map { JSONLines.line($0) + "\n" }.joined()
        #expect(rewritten == Simulator.recordingText(for: scenario))
    }

    /// The allocation-free fast path must read every line exactly as the strict parser does.
    @Test(arguments: ["coached-sweep", "dark-room", "floor-above", "two-tags", "walking-peer", "tum-fr1-xyz-uwb"])
    func fastPathReadsExactlyWhatTheStrictParserReads(name: String) throws {
        let path = TestSupport.packageRoot.appendingPathComponent("Datasets/\(name).jsonl").path
        let fast = try RecordingReader.readAll(path: path, fastPath: true)
        let strict = try RecordingReader.readAll(path: path, fastPath: false)
        #expect(fast.count == strict.count)
        #expect(fast == strict)
    }

    @Test func fastPathDefersEveryOddityToTheStrictParser() throws {
        // Whitespace, key order, unknown keys (scalar, array, nested object), exponents,
        // negative zero, escapes: all must read as the strict parser reads them.
        let text = Self.header + "\n" + """
        { "t" : 0.5 , "type":"pose","tracking":"normal","orientation":[0,0,0,1],"position":[1e-3,-0.0,2.5E+1],"extra":[1,"a",null],"more":{"x":1}}
        {"type":"uwb","object":"tag","t":0.6,"distance":4.25,"direction":[0.6,0,-0.8],"note":"caf\\u00e9"}
        {"type":"uwb","object":"tag","t":0.7,"distance":3.1415926535897932384626433832795,"direction":null}
        {"type":"pose","t":0.8,"position":[0.1,0.2,0.3],"orientation":[0,0,0,1],"tracking":"limited","trackingReason":"relocalizing","ambientIntensity":null}

        """
        let path = try TestSupport.temporaryFile(text)
        let fast = try RecordingReader.readAll(path: path, fastPath: true)
        #expect(fast == (try RecordingReader.readAll(path: path, fastPath: false)))
        #expect(fast.count == 5)
        if case .pose(let p) = fast[1] { #expect(p.positionInWorld == Vector3(0.001, 0, 25)) }
    }

    @Test func theSpecExamplesAreAccepted() throws {
        let text = Self.header + "\n" + """
        {"type":"pose","t":0.016,"position":[0.0,1.4,0.0],"orientation":[0,0,0,1],"tracking":"normal","ambientIntensity":1000}
        {"type":"uwb","t":0.100,"object":"tag","distance":3.21,"direction":[0.1,-0.05,-0.9937303457]}
        {"type":"pose","t":0.2,"position":[0.0,1.4,0.0],"orientation":[0,0,0,1],"tracking":"limited","trackingReason":"insufficientFeatures"}
        {"type":"uwb","t":0.3,"object":"tag","distance":null,"direction":null,"futureKey":{"nested":[1,2]}}
        {"type":"removed","t":9.5,"object":"tag","reason":"timeout"}
        {"type":"truth","object":"tag","position":[1.0,0.5,-3.0]}
        {"type":"truth","t":9.6,"object":"tag","position":[1.0,0.5,-3.0]}

        """
        let events = try RecordingReader.readAll(path: try TestSupport.temporaryFile(text))
        #expect(events.count == 8)
        if case .uwb(_, let m) = events[2] {
            #expect(m.distance == 3.21)
            #expect(m.directionInDevice == Vector3(0.1, -0.05, -0.9937303457))
        } else { Issue.record("third line is not a uwb update") }
        if case .pose(let p) = events[3] { #expect(p.tracking == .limited(.insufficientFeatures)) }
    }

    static let invalidCases: [(String, String)] = [
        (#"{"type":"pose","t":1,"position":[0,1.4,0],"orientation":[0,0,0,1.2],"tracking":"normal"}"#,
         "recording.jsonl:2: key 'orientation': not a unit quaternion (norm 1.2)"),
        (#"{"type":"pose","t":1,"orientation":[0,0,0,1],"tracking":"normal"}"#,
         "recording.jsonl:2: key 'position': missing required key"),
        (#"{"type":"pose","t":"1","position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"normal"}"#,
         "recording.jsonl:2: key 't': expected a number, found a string"),
        (#"{"type":"uwb","t":1,"object":"tag","distance":1e999,"direction":null}"#,
         "recording.jsonl:2: key 'distance': not a finite number"),
        (#"{"type":"uwb","t":1,"object":"tag","distance":2,"direction":[0,0,-2]}"#,
         "recording.jsonl:2: key 'direction': not a unit vector (norm 2.0)"),
        (#"{"type":"uwb","t":1,"object":"lamp","distance":2,"direction":null}"#,
         "recording.jsonl:2: key 'object': object 'lamp' is not declared in the header"),
        (#"{"type":"teleport","t":1}"#, "recording.jsonl:2: key 'type': unknown type 'teleport'"),
        (#"{"type":"pose","t":1,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"lost"}"#,
         "recording.jsonl:2: key 'tracking': unknown tracking state 'lost' (expected normal, limited or notAvailable)"),
        (#"{"type":"pose","t":1,"position":[0,1.4],"orientation":[0,0,0,1],"tracking":"normal"}"#,
         "recording.jsonl:2: key 'position': expected 3 numbers, found 2"),
        (#"{"type":"pose","t":1,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"normal""#,
         "recording.jsonl:2: invalid JSON at column 86: unexpected end of line (truncated JSON?)"),
    ]

    static let moreInvalidCases: [(String, String)] = [
        (#"{"type":"pose","t":1,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"limited"}"#,
         "recording.jsonl:2: key 'trackingReason': missing required key"),
        (#"{"type":"pose","t":1,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"limited","trackingReason":"tired"}"#,
         "recording.jsonl:2: key 'trackingReason': unknown tracking reason 'tired'"),
        (#"{"type":"pose","t":1,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"normal","ambientIntensity":-5}"#,
         "recording.jsonl:2: key 'ambientIntensity': negative intensity -5.0"),
        (#"{"type":"uwb","t":1,"object":"tag","distance":-0.5,"direction":null}"#,
         "recording.jsonl:2: key 'distance': negative distance -0.5"),
        (#"{"type":"uwb","t":1,"object":"tag","distance":"far","direction":null}"#,
         "recording.jsonl:2: key 'distance': expected a number or null, found a string"),
        (#"{"type":"uwb","t":1,"distance":2,"direction":null}"#, "recording.jsonl:2: key 'object': missing required key"),
        (#"{"type":"removed","t":1,"object":"tag","reason":"bored"}"#,
         "recording.jsonl:2: key 'reason': unknown removal reason 'bored' (expected timeout or peerEnded)"),
        (#"{"type":"truth","object":"tag"}"#, "recording.jsonl:2: key 'position': missing required key"),
        (#"{"type":"header","format":"nearby-recording","version":1,"device":{},"objects":[]}"#,
         "recording.jsonl:2: key 'type': a second header"),
        (#"{"type":"uwb","t":1,"t":2,"object":"tag","distance":2,"direction":null}"#,
         "recording.jsonl:2: invalid JSON at column 21: duplicate key 't'"),
        (#"[1,2,3]"#, "recording.jsonl:2: expected a JSON object, found an array"),
        (#"{"t":1}"#, "recording.jsonl:2: key 'type': missing required key"),
        (#"{"type":"pose","t":NaN,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"normal"}"#,
         "recording.jsonl:2: invalid JSON at column 20: unexpected character 'N'"),
    ]

    @Test(arguments: moreInvalidCases)
    func moreInvalidLinesNameFileLineAndKey(line: String, message: String) throws {
        #expect(try TestSupport.readingError(Self.header + "\n" + line + "\n") == message)
    }

    static let invalidHeaders: [(String, String)] = [
        (#"{"type":"pose","t":0,"position":[0,0,0],"orientation":[0,0,0,1],"tracking":"normal"}"#,
         "recording.jsonl:1: key 'type': the first line must be the header, found 'pose'"),
        (#"{"type":"header","format":"other-format","version":1,"device":{},"objects":[]}"#,
         "recording.jsonl:1: key 'format': unknown format 'other-format' (expected nearby-recording)"),
        (#"{"type":"header","format":"nearby-recording","device":{},"objects":[]}"#,
         "recording.jsonl:1: key 'version': missing required key"),
        (#"{"type":"header","format":"nearby-recording","version":1,"objects":[]}"#,
         "recording.jsonl:1: key 'device': missing required key"),
        (#"{"type":"header","format":"nearby-recording","version":1,"device":{"supportsCameraAssistance":"yes"},"objects":[]}"#,
         "recording.jsonl:1: key 'device.supportsCameraAssistance': expected a boolean, found a string"),
        (#"{"type":"header","format":"nearby-recording","version":1,"device":{},"objects":[{"id":"a","kind":"lamp"}]}"#,
         "recording.jsonl:1: key 'objects[0].kind': unknown kind 'lamp' (expected accessory or peer)"),
        (#"{"type":"header","format":"nearby-recording","version":1,"device":{},"objects":[{"id":"a","kind":"peer"},{"id":"a","kind":"peer"}]}"#,
         "recording.jsonl:1: key 'objects[1].id': duplicate object 'a'"),
        (#"{"type":"header","format":"nearby-recording","version":1,"device":{},"objects":{}}"#,
         "recording.jsonl:1: key 'objects': expected an array, found an object"),
    ]

    @Test(arguments: invalidHeaders)
    func invalidHeadersNameTheKey(line: String, message: String) throws {
        #expect(try TestSupport.readingError(line + "\n") == message)
    }

    @Test func invalidARConfigurationIsRefusedBeforeReplay() throws {
        let header = Self.header.replacingOccurrences(of: #""objects""#, with: #""arConfiguration":{"worldAlignment":"gravity","collaborationEnabled":true},"objects""#)
        let path = try TestSupport.temporaryFile(header + "\n")
        #expect(throws: ReplayError.self) { try RecordingReplay.run(path: path) { _ in } }
    }

    @Test func blankLinesAndUnknownKeysAreAccepted() throws {
        let text = Self.header + "\n\n" + #"{"type":"uwb","t":1,"object":"tag","distance":2,"direction":null,"rssi":-70}"# + "\n   \n"
        #expect(try TestSupport.readingError(text) == nil)
    }

    @Test(arguments: invalidCases)
    func invalidLinesNameFileLineAndKey(line: String, message: String) throws {
        #expect(try TestSupport.readingError(Self.header + "\n" + line + "\n") == message)
    }

    /// The format's own example direction has norm 0.9963, outside its 1e-3 tolerance.
    @Test func theSpecExampleDirectionIsNotUnitAndIsRejected() throws {
        let line = #"{"type":"uwb","t":0.100,"object":"tag","distance":3.21,"direction":[0.10,-0.05,-0.99]}"#
        #expect(try TestSupport.readingError(Self.header + "\n" + line + "\n")?.hasPrefix("recording.jsonl:2: key 'direction': not a unit vector (norm 0.996") == true)
    }

    @Test func timeGoingBackwardsIsAnError() throws {
        let text = Self.header + "\n" + """
        {"type":"pose","t":2,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"normal"}
        {"type":"uwb","t":1.5,"object":"tag","distance":2,"direction":null}

        """
        #expect(try TestSupport.readingError(text) == "recording.jsonl:3: key 't': time goes backwards (1.5 after 2.0)")
    }

    @Test func truncatedLastLineAndBadVersionAreErrors() throws {
        let truncated = Self.header + "\n" + #"{"type":"uwb","t":1,"object":"tag","dist"#
        #expect(try TestSupport.readingError(truncated)?.hasPrefix("recording.jsonl:2: truncated last line") == true)
        let v2 = Self.header.replacingOccurrences(of: #""version":1"#, with: #""version":2"#) + "\n"
        #expect(try TestSupport.readingError(v2) == "recording.jsonl:1: key 'version': unsupported version 2 (this reader supports 1)")
        #expect(try TestSupport.readingError("") == "recording.jsonl:1: empty recording (no header line)")
    }

    @Test func estimateLinesFollowTheFormat() throws {
        let estimate = NearbyObjectEstimate(
            timestamp: 3.2, objectID: "tag", distance: 3.18, direction: Vector3(0, 0, -1), horizontalAngle: 0.081,
            verticalDirectionEstimate: .same, worldTransform: WorldTransform(translation: Vector3(1.02, 0.47, -2.97)),
            convergence: AlgorithmConvergence(status: .converged))
        #expect(JSONLines.line(estimate) == #"{"t":3.2,"object":"tag","distance":3.18,"direction":[0,0,-1],"horizontalAngle":0.081,"verticalDirectionEstimate":"same","worldTransform":[1,0,0,0,0,1,0,0,0,0,1,0,1.02,0.47,-2.97,1],"convergence":{"status":"converged","reasons":[]},"velocity":null,"motion":null,"guidance":null}"#)
        let withheld = NearbyObjectEstimate(timestamp: 1, objectID: "tag", distance: 4,
                                            convergence: AlgorithmConvergence(status: .notConverged([.insufficientVerticalSweep, .insufficientMovement])))
        let value = try JSONLineParser.parse(JSONLines.line(withheld))
        #expect(value["horizontalAngle"] == .null && value["worldTransform"] == .null && value["direction"] == .null)
        #expect(value["convergence"]?["reasons"] == .array([.string("insufficientMovement"), .string("insufficientVerticalSweep")]))
        let session = SessionConvergenceUpdate(timestamp: 5, convergence: AlgorithmConvergence(status: .notConverged(.insufficientLighting)))
        #expect(JSONLines.line(session) == #"{"t":5,"convergence":{"status":"notConverged","reasons":["insufficientLighting"]}}"#)
    }
}
