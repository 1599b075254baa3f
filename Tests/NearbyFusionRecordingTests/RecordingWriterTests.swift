import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// `RecordingWriter`: what it writes reads back as the same events, and what the reader would
/// refuse it refuses, naming the line and the key, without writing it.
@Suite("Recording writer")
struct RecordingWriterTests {
    static let header = RecordingHeader(deviceName: "phone", capabilities: .phone,
                                        objects: [(id: "tag", kind: .accessory), (id: "keys", kind: .accessory), (id: "friend", kind: .peer)],
                                        rangingByObject: ["keys": .bluetoothChannelSounding])

    @Test(arguments: ["floor-above", "walking-peer", "two-tags", "cs-coached-step", "tag-picked-up-hinted"])
    func everyEventWrittenReadsBackTheSame(scenario name: String) throws {
        let scenario = try #require(ScenarioCatalogue.all.first { $0.name == name }).make(5)
        let events = Simulator.events(for: scenario)
        var lines: [String] = []
        guard case .header(let header)? = events.first else { Issue.record("no header"); return }
        var writer = try RecordingWriter(header: header) { lines.append($0) }
        for event in events.dropFirst() { try writer.append(event) }
        #expect(writer.linesWritten == events.count)
        let text = lines.joined(separator: "\n") + "\n"
        let read = try RecordingReader.readAll(path: TestSupport.temporaryFile(text, name: "\(name)-written.jsonl"))
        #expect(read == events, "first difference at \(read.indices.first { read[$0] != events[$0] } ?? -1)")
        // The same bytes as the unchecked serialiser.
        #expect(text == JSONLines.text(events))
        #expect(try RecordingWriter.text(events) == text)
    }

    @Test func whatTheReaderRefusesIsNotWritten() throws {
        var lines: [String] = []
        var writer = try RecordingWriter(header: Self.header, name: "capture.jsonl") { lines.append($0) }
        let pose = DevicePose(timestamp: 1, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity)
        try writer.append(.pose(pose))
        let refused: [(RecordingEvent, String)] = [
            (.pose(DevicePose(timestamp: 0.5, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity)),
             "capture.jsonl:3: key 't': time goes backwards"),
            (.pose(DevicePose(timestamp: 2, positionInWorld: Vector3(0, 1.4, 2e6), worldFromDevice: .identity)),
             "capture.jsonl:3: key 'position': a coordinate beyond"),
            (.pose(DevicePose(timestamp: 2, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: Quaternion(x: 0, y: 0, z: 0, w: 2))),
             "capture.jsonl:3: key 'orientation': not a unit quaternion"),
            (.pose(DevicePose(timestamp: 2e10, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity)),
             "capture.jsonl:3: key 't': a time beyond"),
            (.uwb(objectID: "lamp", UWBMeasurement(timestamp: 2, distance: 1, directionInDevice: nil)),
             "capture.jsonl:3: key 'object': object 'lamp' is not declared"),
            (.uwb(objectID: "tag", UWBMeasurement(timestamp: 2, distance: 1500, directionInDevice: nil)),
             "capture.jsonl:3: key 'distance': distance 1500 m is beyond"),
            (.uwb(objectID: "tag", UWBMeasurement(timestamp: 2, distance: .nan, directionInDevice: nil)),
             "capture.jsonl:3"),
            (.uwb(objectID: "tag", UWBMeasurement(timestamp: 2, distance: 1, directionInDevice: Vector3(0, 0, -0.5))),
             "capture.jsonl:3: key 'direction': not a unit vector"),
            (.header(Self.header), "capture.jsonl:3: key 'type': a second header"),
        ]
        for (event, message) in refused {
            #expect(throws: RecordingError.self) { try writer.append(event) }
            do { try writer.append(event) } catch {
                #expect(error.description.hasPrefix(message), "\(error.description)")
            }
        }
        #expect(lines.count == 2 && writer.linesWritten == 2, "nothing refused was written")
        // A Channel Sounding object's update is written as a `range` line, without a direction.
        try writer.append(.uwb(objectID: "keys", UWBMeasurement(timestamp: 2, distance: 3.4, directionInDevice: Vector3(0, 0, -1))))
        #expect(lines.last == #"{"type":"range","t":2,"object":"keys","distance":3.4}"#)
        try writer.append(.motionState(objectID: "tag", timestamp: 2.5, state: .moving))
        try writer.append(.removed(objectID: "friend", timestamp: 3, reason: .peerEnded))
        try writer.append(.truth(objectID: "tag", timestamp: nil, positionInWorld: Vector3(1, 0.5, -3)))
        let read = try RecordingReader.readAll(path: TestSupport.temporaryFile(lines.joined(separator: "\n") + "\n", name: "capture.jsonl"))
        #expect(read.count == 6)
    }

    @Test func aHeaderTheReaderRefusesStartsNothing() {
        let bad = RecordingHeader(deviceName: "phone", capabilities: .phone, objects: [(id: "tag", kind: .accessory), (id: "tag", kind: .peer)])
        #expect(throws: RecordingError.self) { _ = try RecordingWriter(header: bad) { _ in } }
    }
}
