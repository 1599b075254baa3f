#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command writes what it produces, without harming what the user named.
///
/// How a path is written depends on what is there (symbolic links are followed):
///
/// | the path names | what happens |
/// | --- | --- |
/// | `-` | standard output, written in place |
/// | a regular file (or a link to one) | a temporary file in the *target's* directory, given the target's permission bits (and owner, when run as root), is renamed over the target on ``commit()``: readers see the old file or the whole new one, never a part, and a command that fails leaves the old file as it was. The link itself stays a link |
/// | nothing yet | created the same way (temporary file, then rename), with mode `0666 & ~umask` |
/// | a link to nothing | the link's target is created, as a shell redirection would |
/// | a character or block device, a FIFO | opened for writing in place, never created, truncated, renamed or removed |
/// | a directory, a socket | an error naming the path |
///
/// When the temporary file cannot be made in the target's directory (no write permission
/// there, a read-only directory over a writable file) an existing regular file is truncated
/// and written in place instead, as `>` in a shell does.
///
/// Writes are buffered (64 KiB); every error names the path.
final class OutputFile {
    /// The path as the user gave it (for messages).
    let path: String
    private let descriptor: Int32
    /// The temporary file and the file it will replace, when writing by rename.
    private var pendingRename: (temporary: String, target: String)?
    private var buffer: [UInt8] = []
    private var closed = false

    /// Opens `path` for writing as the table above says.
    /// - Throws: `CommandFailure` naming the path and the system's reason.
    init(path: String) throws {
        self.path = path
        buffer.reserveCapacity(1 << 16)
        if path == "-" {
            descriptor = STDOUT_FILENO
            return
        }
        var status = stat()
        if stat(path, &status) == 0 {
            switch status.st_mode & S_IFMT {
            case S_IFREG:
                let target = Self.resolved(path)
                if let (fd, temporary) = Self.makeTemporary(beside: target, mode: status.st_mode & 0o7777) {
                    if geteuid() == 0 { _ = fchown(fd, status.st_uid, status.st_gid) }
                    descriptor = fd
                    pendingRename = (temporary, target)
                } else {
                    descriptor = try Self.openInPlace(path, flags: O_WRONLY | O_TRUNC)
                }
            case S_IFDIR:
                throw CommandFailure(message: "\(path): is a directory, not a file to write")
            case S_IFSOCK:
                throw CommandFailure(message: "\(path): is a socket, not a file to write")
            default:
                // A device or a FIFO: write into it, never replace it.
                descriptor = try Self.openInPlace(path, flags: O_WRONLY)
            }
            return
        }
        let statError = errno
        guard statError == ENOENT else {
            throw CommandFailure(message: "\(path): cannot write (\(Self.reason(statError)))")
        }
        var linkStatus = stat()
        if lstat(path, &linkStatus) == 0 && (linkStatus.st_mode & S_IFMT) == S_IFLNK {
            // A dangling link: create what it points to.
            descriptor = try Self.openInPlace(path, flags: O_WRONLY | O_CREAT | O_TRUNC)
        } else if let (fd, temporary) = Self.makeTemporary(beside: path, mode: 0o666 & ~Self.currentUmask()) {
            descriptor = fd
            pendingRename = (temporary, path)
        } else {
            descriptor = try Self.openInPlace(path, flags: O_WRONLY | O_CREAT | O_TRUNC)
        }
    }

    deinit {
        // Never committed (the command failed): the target keeps its old content.
        if !closed {
            if descriptor != STDOUT_FILENO { _ = close(descriptor) }
            if let pendingRename { _ = unlink(pendingRename.temporary) }
        }
    }

    /// Appends one line produced in place (no intermediate `String`) and a newline.
    func writeLine(_ produce: (inout [UInt8]) -> Void) throws {
        produce(&buffer)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Appends `line` and a newline.
    func write(line: String) throws {
        try write(line)
        buffer.append(0x0A)
    }

    /// Appends `text` as it is.
    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Writes the buffer out, retrying short writes and interruptions.
    func flush() throws {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { bytes in
                systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw CommandFailure(message: "\(path): cannot write (\(Self.reason(errno)))")
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, closes and — when writing by rename — puts the new file in place.
    func commit() throws {
        guard !closed else { return }
        try flush()
        closed = true
        guard descriptor != STDOUT_FILENO else { return }
        if let pendingRename {
            let synced = fsync(descriptor) == 0 || errno == EINVAL
            let syncError = errno
            _ = close(descriptor)
            guard synced else {
                _ = unlink(pendingRename.temporary)
                throw CommandFailure(message: "\(path): cannot write (\(Self.reason(syncError)))")
            }
            if rename(pendingRename.temporary, pendingRename.target) != 0 {
                let renameError = errno
                _ = unlink(pendingRename.temporary)
                throw CommandFailure(message: "\(path): cannot replace (\(Self.reason(renameError)))")
            }
        } else if close(descriptor) != 0 && errno != EINTR {
            throw CommandFailure(message: "\(path): cannot write (\(Self.reason(errno)))")
        }
    }

    // MARK: - System calls

    private static func openInPlace(_ path: String, flags: Int32) throws -> Int32 {
        while true {
            let fd = open(path, flags | O_CLOEXEC, 0o666)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw CommandFailure(message: "\(path): cannot open for writing (\(reason(errno)))")
        }
    }

    /// A new, exclusive file `.NAME.nearby-fusion-PID-N.tmp` beside `target`, with `mode`;
    /// `nil` when the directory does not allow it.
    private static func makeTemporary(beside target: String, mode: mode_t) -> (Int32, String)? {
        let slash = target.lastIndex(of: "/")
        let directory = slash.map { String(target[...$0]) } ?? ""
        let name = slash.map { String(target[target.index(after: $0)...]) } ?? target
        for attempt in 0..<100 {
            let temporary = "\(directory).\(name).nearby-fusion-\(getpid())-\(attempt).tmp"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 {
                _ = fchmod(fd, mode)
                return (fd, temporary)
            }
            if errno != EEXIST && errno != EINTR { return nil }
        }
        return nil
    }

    /// The file a path finally names, every symbolic link followed.
    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    private static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// `write(2)`, under a name that does not clash with ``OutputFile/write(_:)``.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, bytes, count)
    #elseif canImport(Musl)
    Musl.write(fd, bytes, count)
    #else
    Darwin.write(fd, bytes, count)
    #endif
}
