import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import Testing
import TestHelpers

/// Figures that cannot break: every statistic is finite or absent, on every edge.
@Suite("statistics that cannot break")
struct ReliabilityTests {
    @Test func statisticsAreFiniteOrAbsentOnEveryEdge() throws {
        #expect(ErrorStatistics([]) == nil)
        #expect(ErrorStatistics([1, .nan]) == nil && ErrorStatistics([.infinity]) == nil)
        let one = try #require(ErrorStatistics([2.5]))
        #expect(one.median == 2.5 && one.p95 == 2.5 && one.std == 0 && one.rmse == 2.5)
        // Values near the largest Double: Σ e² overflowed, and a − a interpolated to NaN.
        let huge = try #require(ErrorStatistics([1e308, 1e308, 1.7e308, 3]))
        for x in [huge.max, huge.mean, huge.median, huge.min, huge.rmse, huge.std, huge.p95] { #expect(x.isFinite) }
        #expect(abs(huge.median - 1e308) < 1e293 && abs(huge.rmse / 1.10567e308 - 1) < 1e-4)
        // Ordinary values are what they were.
        let s = try #require(ErrorStatistics([1, 2, 3, 4]))
        #expect(s.mean == 2.5 && s.median == 2.5 && abs(s.rmse - 2.7386127875) < 1e-9 && abs(s.std - 1.1180339887) < 1e-9)
        #expect(Vector3(1e308, 1e308, 0).scaledLength.isFinite && Vector3(3, 4, 0).scaledLength == 5)
    }

    @Test func anUpdateAtNoFiniteTimeIsPassedThroughAndChangesNothing() {
        // Through the library (the recording reader rejects such a time with file:line:key):
        // a Channel Sounding tag's published distance is its fused one, computed from the pose
        // at the update's time — NaN for a NaN time before this guard.
        func run(insertingAt special: Double?) -> [NearbyObjectEstimate] {
            var engine = FusionEngine()
            let tag = engine.register(objectID: "tag", ranging: .bluetoothChannelSounding)
            var out: [NearbyObjectEstimate] = []
            for k in 0..<200 {
                let t = Double(k) * 0.05
                let p = Vector3(0.5 * sin(t), 1.4 + 0.3 * sin(0.7 * t), 0.3 * sin(0.3 * t))
                _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: p, worldFromDevice: .identity))
                guard k % 2 == 0 else { continue }
                let range = (Vector3(1, 1, -4) - p).length
                if k == 100, let special {
                    let odd = engine.ingest(UWBMeasurement(timestamp: special, distance: range, directionInDevice: nil), for: tag)
                    #expect(odd.distance == range && odd.worldTransform == nil && odd.horizontalAngle == nil, "\(special)")
                }
                out.append(engine.ingest(UWBMeasurement(timestamp: t, distance: range, directionInDevice: nil), for: tag))
            }
            return out
        }
        let clean = run(insertingAt: nil)
        for special in [Double.nan, .infinity, -.infinity] {
            let withOdd = run(insertingAt: special)
            #expect(withOdd.map(\.distance) == clean.map(\.distance), "\(special)")
            #expect(withOdd.allSatisfy { $0.distance.map(\.isFinite) ?? true })
        }
    }

    @Test func hugeTruthGetsOneVerdictAndLargeErrorsStayFinite() throws {
        // Issue 10, items 5 and 8: truth at 1e308 made `evaluate --json` die and the table
        // print inf and -nan. A coordinate beyond 1,000 km is now an error of the recording,
        // the same for every command; within it, huge errors still give finite figures.
        let coached = try String(contentsOfFile: TestSupport.packageRoot.appendingPathComponent("Datasets/coached-sweep.jsonl").path, encoding: .utf8)
        // Every truth line of the recording moved to `position` (a static truth line as line 2,
        // then each timed one).
        func withTruth(_ position: String) -> String {
            var lines = coached.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for k in lines.indices where lines[k].hasPrefix(#"{"type":"truth""#) {
                lines[k] = lines[k].replacingOccurrences(of: #""position":\[[^\]]*\]"#, with: #""position":"# + position,
                                                         options: .regularExpression)
            }
            lines.insert(#"{"type":"truth","object":"tag","position":"# + position + "}", at: 1)
            return lines.joined(separator: "\n")
        }
        let huge = try TestSupport.temporaryFile(withTruth("[0.9,1.2,1e308]"), name: "huge-truth.jsonl")
        var verdicts: Set<String> = []
        for arguments in [["replay", huge], ["evaluate", huge], ["evaluate", huge, "--json"]] {
            let result = try TestSupport.run(arguments)
            #expect(result.status == 1)
            verdicts.insert(result.stderr)
        }
        #expect(verdicts == ["Error: \(huge):2: key 'position': a coordinate beyond 1000000 m of the origin\n"])
        let far = try TestSupport.temporaryFile(withTruth("[0.9,1.2,9e5]"), name: "far-truth.jsonl")
        let json = try TestSupport.run(["evaluate", far, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(!json.stdout.contains("inf") && !json.stdout.contains("nan"))
        _ = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let table = try TestSupport.run(["evaluate", far])
        #expect(table.status == 0 && !table.stdout.contains("inf") && !table.stdout.contains("nan"))
        let replay = try TestSupport.run(["replay", far])
        #expect(replay.status == 0 && replay.stdout.contains("m from truth") && !replay.stdout.contains("inf"))
    }
}

/// One answer per input: encodings and messages (issue 10, items 2 and 7).
@Suite("encodings and messages")
struct EncodingTests {
    static let header = #"{"type":"header","format":"nearby-recording","version":1,"device":{"name":"phone"},"objects":[{"id":"tag","kind":"accessory"}]}"#

    /// The error reading `bytes` gives through the fast and the strict path (they must agree).
    static func errors(_ bytes: [UInt8]) throws -> (fast: String?, strict: String?) {
        let url = Scratch.directory.appendingPathComponent("encoding-\(UUID().uuidString).jsonl")
        try Data(bytes).write(to: url)
        func read(_ fast: Bool) -> String? {
            do { _ = try RecordingReader.readAll(path: url.path, fastPath: fast); return nil } catch {
                return error.description.replacingOccurrences(of: url.path, with: "F")
            }
        }
        return (read(true), read(false))
    }

    @Test func aByteOrderMarkOrUTF16IsNamed() throws {
        let bom = try Self.errors([0xEF, 0xBB, 0xBF] + Array((Self.header + "\n").utf8))
        #expect(bom.fast == "F:1: UTF-8 byte-order mark at the start of the file: remove it (recordings are UTF-8 without a BOM)")
        let utf16 = try Self.errors([0xFF, 0xFE] + Array((Self.header + "\n").utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(utf16.fast == "F:1: UTF-16 text (byte-order mark): recordings are UTF-8")
    }

    @Test(arguments: [
        // An unknown key's value (the fast decoder skipped it), a lone continuation byte, an
        // overlong '/', a surrogate, a truncated sequence at the end of the line.
        (#"{"type":"uwb","t":0.5,"object":"tag","distance":3,"note":"a"#, [0xFF], #"b"}"#),
        (#"{"type":"uwb","t":0.5,"object":"tag","distance":3,"note":""#, [0x80], #""}"#),
        (#"{"type":"uwb","t":0.5,"object":"tag","distance":3,"note":""#, [0xC0, 0xAF], #""}"#),
        (#"{"type":"uwb","t":0.5,"object":"tag","distance":3,"note":""#, [0xED, 0xA0, 0x80], #""}"#),
        (#"{"type":"uwb","t":0.5,"object":"tag","distance":3,"x":""#, [0xE2, 0x82], ""),
    ])
    func invalidUTF8AnywhereIsAnErrorNamingLineAndColumn(before: String, bad: [UInt8], after: String) throws {
        // The column of the first bad byte: the bytes before it, plus one.
        let column = before.utf8.count + 1
        let bytes = Array((Self.header + "\n").utf8) + Array(before.utf8) + bad + Array((after + "\n").utf8)
        let result = try Self.errors(bytes)
        #expect(result.fast == result.strict)
        #expect(result.fast?.hasPrefix("F:2: invalid UTF-8 at column \(column)") == true, "\(String(describing: result.fast))")
        // In the header's device name too.
        let prefix = #"{"type":"header","format":"nearby-recording","version":1,"device":{"name":"ph"#
        let header = Array(prefix.utf8) + [0xFF] + Array(#"one"},"objects":[]}"#.utf8) + [0x0A]
        #expect(try Self.errors(header).fast == "F:1: invalid UTF-8 at column \(prefix.utf8.count + 1)")
        // Valid multi-byte UTF-8 is fine.
        let fine = Array((Self.header + "\n").utf8) + Array(#"{"type":"uwb","t":0.5,"object":"tag","distance":3,"note":"é 東 😀"}"#.utf8) + [0x0A]
        #expect(try Self.errors(fine) == (nil, nil))
    }

    @Test func controlCharactersInMessagesAreEscaped() throws {
        let bytes = Array((Self.header + "\n" + #"{"type":"uwb","t":0.5,"object":"tag\u0000\u001b[31m"}"# + "\n").utf8)
        let message = try #require(try Self.errors(bytes).fast)
        #expect(message == #"F:2: key 'object': object 'tag\u{0}\u{1b}[31m' is not declared in the header"#)
        #expect(!message.unicodeScalars.contains { $0.value < 0x20 })
    }
}

/// The fast and the strict decoder give one verdict (issue 10, item 3).
@Suite("one verdict per line")
struct DecoderAgreementTests {
    @Test(arguments: [
        #"{"type":"uwb","t":0.5,"object":"tag","distance":3,"x":1,"x":2}"#,
        #"{"type":"uwb","t":0.5,"object":"tag","x":1,"distance":3,"x":2}"#,
        #"{"type":"uwb","t":0.5,"object":"tag","distance":3,"x":1,"y":2}"#,
        #"{"type":"uwb","t":0.5,"object":"tag","distance":3,"distance":4}"#,
        #"{"type":"pose","t":0.5,"position":[0,1,0],"orientation":[0,0,0,1],"tracking":"normal","a":{"b":1},"a":[1]}"#,
    ])
    func duplicateAndUnknownKeysGetTheSameVerdictOnBothPaths(line: String) throws {
        let (fast, strict) = try EncodingTests.errors(Array((EncodingTests.header + "\n" + line + "\n").utf8))
        #expect(fast == strict, "fast: \(String(describing: fast)); strict: \(String(describing: strict))")
    }
}

/// Numbers beyond a double are named, not echoed as `inf` (issue 10, item 7).
@Suite("numbers out of range")
struct NumberRangeTests {
    @Test func anOverflowingNumberIsNamedWithItsKeyOnBothPaths() throws {
        let version = try #require(try EncodingTests.errors(Array(#"{"type":"header","format":"nearby-recording","version":1e309,"device":{},"objects":[]}"#.utf8) + [0x0A]).fast)
        #expect(version == "F:1: key 'version': not a finite number (out of range of a double)")
        let line = #"{"type":"uwb","t":0.5,"object":"tag","distance":-2e400}"#
        let (fast, strict) = try EncodingTests.errors(Array((EncodingTests.header + "\n" + line + "\n").utf8))
        #expect(fast == strict && fast == "F:2: key 'distance': not a finite number", "\(String(describing: fast))")
    }
}

/// Numbers the engine would only echo are bounded (issue 10, item 8).
@Suite("bounds on echoed numbers")
struct BoundsTests {
    @Test(arguments: [
        (#"{"type":"uwb","t":0.5,"object":"tag","distance":1e308}"#, "F:2: key 'distance': distance 1e+308 m is beyond any radio's range (at most 1000 m)"),
        (#"{"type":"uwb","t":0.5,"object":"tag","distance":1000.5}"#, "F:2: key 'distance': distance 1000.5 m is beyond any radio's range (at most 1000 m)"),
        (#"{"type":"pose","t":0.5,"position":[1e9,1.4,0],"orientation":[0,0,0,1],"tracking":"normal"}"#, "F:2: key 'position': a coordinate beyond 1000000 m of the origin"),
        (#"{"type":"truth","object":"tag","position":[0.9,1.2,2e6]}"#, "F:2: key 'position': a coordinate beyond 1000000 m of the origin"),
    ])
    func aNumberBeyondItsPhysicalBoundIsAnErrorOnBothPaths(line: String, message: String) throws {
        let (fast, strict) = try EncodingTests.errors(Array((EncodingTests.header + "\n" + line + "\n").utf8))
        #expect(fast == strict)
        #expect(fast == message, "\(String(describing: fast))")
        // A range beyond what is fused (20 m) but within a kilometre stays valid.
        let far = #"{"type":"uwb","t":0.5,"object":"tag","distance":150}"#
        #expect(try EncodingTests.errors(Array((EncodingTests.header + "\n" + far + "\n").utf8)) == (nil, nil))
    }
}
