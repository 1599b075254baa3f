import Foundation

/// Checks on a file the user names as input (besides recordings, which `RecordingReader`
/// reads in bounded chunks): a device or a FIFO could be read for ever, so small inputs read
/// whole — shard documents, lists of recordings — must be regular files.
enum InputFile {
    /// Throws unless `path` is a regular file; `what` names the input in the message.
    static func requireRegular(_ path: String, what: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure(message: "\(path): no such file")
        }
        if isDirectory.boolValue { throw CommandFailure(message: "\(path): a folder, not \(what)") }
        if let type = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType, type != .typeRegular {
            throw CommandFailure(message: "\(path): not a regular file (\(what) must be one)")
        }
    }
}
