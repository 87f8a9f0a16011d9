import Glibc
import PadCore
public import SystemPackage

/// padbridge's one owner of reading and writing files (profiles, trust files, the console token, the hiding
/// service's records, sysfs attributes): each descriptor opened, used and closed in one call, every system call's
/// result checked, every failure a `FileError` naming the path (`ReadError` for `contents(atPath:)`).
public enum TextFile {
    /// Why a text file could not be read; the description names the file and the cause.
    public enum ReadError: Error, CustomStringConvertible, Equatable {
        case unreadable(path: String, cause: Errno)
        case notUTF8(path: String)

        public var description: String {
            switch self {
            case let .unreadable(path, cause):
                let remedy = cause == .permissionDenied ? " (check the file's permissions)" : ""
                return "cannot read \(path): \(cause)\(remedy)"
            case let .notUTF8(path):
                return "\(path) is not UTF-8 text"
            }
        }
    }

    /// A file read whole, with its owner and permission bits as fstat(2) gave them for the descriptor it was read
    /// through (so they are the file's that was read, even if the path is renamed meanwhile).
    public struct Contents: Sendable {
        public var bytes: [UInt8]
        public var permissions: FilePermissions
        public var ownerID: UInt32
        /// The file holds more than the `maximumBytes` asked for; `bytes` stops after the limit's first byte over.
        public var isOverLimit: Bool

        /// The bytes as text, invalid UTF-8 repaired (callers that need valid text use `contents(atPath:)`).
        public var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    /// The file's contents. Reads until end of file; fails on anything that is not valid UTF-8.
    public static func contents(atPath path: String) throws(ReadError) -> String {
        let bytes = try self.bytes(atPath: path)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8(path: path) }
        return text
    }

    /// The file's bytes, read until end of file.
    static func bytes(atPath path: String) throws(ReadError) -> [UInt8] {
        do throws(FileError) {
            return try read(atPath: path).bytes
        } catch {
            throw .unreadable(path: path, cause: error.cause)
        }
    }

    /// Reads the file whole, or its first `maximumBytes` and one more (`isOverLimit`). `followingSymlink: false`
    /// refuses a symbolic link (O_NOFOLLOW: ELOOP), as for files that hold secrets.
    public static func read(
        atPath path: String, maximumBytes: Int = .max, followingSymlink: Bool = true
    ) throws(FileError) -> Contents {
        let options: FileDescriptor.OpenOptions = followingSymlink ? [.closeOnExec] : [.closeOnExec, .noFollow]
        let descriptor = try attempt(.read, path) { try FileDescriptor.open(FilePath(path), .readOnly, options: options) }
        return try closing(descriptor, .read, path) { () throws(FileError) in
            let status = try attempt(.read, path) { try descriptor.stat() }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while bytes.count <= maximumBytes {
                let count = try attempt(.read, path) { try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) } }
                if count == 0 { break }
                bytes += chunk[..<count]
            }
            let isOverLimit = bytes.count > maximumBytes
            if isOverLimit { bytes.removeLast(bytes.count - maximumBytes - 1) }
            return Contents(
                bytes: bytes, permissions: status.permissions, ownerID: status.userID.rawValue, isOverLimit: isOverLimit)
        }
    }

    /// Writes `text` to `path` (created 0644 or emptied) in place: sysfs attributes, where a rename means nothing.
    public static func write(_ text: String, to path: String) throws(FileError) {
        let descriptor = try attempt(.write, path) {
            try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
        }
        try closing(descriptor, .write, path) { () throws(FileError) in
            _ = try attempt(.write, path) { try descriptor.writeAll(text.utf8) }
        }
    }

    /// Replaces `path` whole, so that a reader, or the file system after a crash, sees the old file or the new one
    /// and never part of one: writes a new file beside it (created exclusively, close-on-exec, never through a
    /// symbolic link), gives it `permissions` exactly (whatever the umask), syncs it, renames it over `path` and
    /// syncs the directory. On any failure the new file is removed and `path` is left as it was.
    public static func replace(atPath path: String, with text: String, permissions: FilePermissions) throws(FileError) {
        try replace(atPath: path, with: text, permissions: permissions, beforeRename: { _ in })
    }

    /// `replace`, with `beforeRename` given the new file's path once it is written, synced and closed (tests look
    /// at it there).
    static func replace(
        atPath path: String, with text: String, permissions: FilePermissions, beforeRename: (String) -> Void
    ) throws(FileError) {
        let temporary = try createExclusively(besides: path, permissions: permissions)
        do throws(FileError) {
            try closing(temporary.descriptor, .write, temporary.path) { () throws(FileError) in
                let descriptor = temporary.descriptor
                _ = try attempt(.write, temporary.path) { try descriptor.writeAll(text.utf8) }
                try check(.write, temporary.path) { fchmod(descriptor.rawValue, permissions.rawValue) }
                try check(.write, temporary.path) { fsync(descriptor.rawValue) }
            }
            beforeRename(temporary.path)
            try check(.replace, path) { rename(temporary.path, path) }
        } catch {
            unlink(temporary.path)  // best effort: the error being thrown is the one to report
            throw error
        }
        try syncDirectory(holding: path)
    }

    /// Makes a new file at `path` holding `text`, with `permissions` exactly, or fails with `.fileExists` when one
    /// is there (so of two programs making it at once, one makes it and the other reads it). Never through a
    /// symbolic link. A failed write removes the file.
    public static func create(atPath path: String, with text: String, permissions: FilePermissions) throws(FileError) {
        let descriptor = try attempt(.write, path) {
            try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                permissions: permissions)
        }
        do throws(FileError) {
            try closing(descriptor, .write, path) { () throws(FileError) in
                _ = try attempt(.write, path) { try descriptor.writeAll(text.utf8) }
                try check(.write, path) { fchmod(descriptor.rawValue, permissions.rawValue) }
                try check(.write, path) { fsync(descriptor.rawValue) }
            }
        } catch {
            unlink(path)  // best effort: the error being thrown is the one to report
            throw error
        }
    }

    /// Makes `path` and each missing directory above it with `permissions`; one that exists already is fine.
    public static func makeDirectories(_ path: String, permissions: FilePermissions) throws(FileError) {
        var built = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            built += "/" + component
            let made = Errno.checking { mkdir(built, permissions.rawValue) }
            switch made {
            case .success:
                // Exactly `permissions`, whatever the umask takes away at mkdir(2).
                _ = chmod(built, permissions.rawValue)
            case .failure(let cause) where cause != .fileExists:
                throw FileError(.makeDirectory, path: built, cause: cause)
            case .failure:
                break
            }
        }
    }

    /// Removes the file at `path`; one that is not there is fine.
    public static func remove(atPath path: String) throws(FileError) {
        let removed = Errno.checking { unlink(path) }
        if case .failure(let cause) = removed, cause != .noSuchFileOrDirectory {
            throw FileError(.write, path: path, cause: cause)
        }
    }

    // MARK: The choke points

    /// A new file beside `path` (same directory, so the rename stays on one file system), its name `path` plus
    /// `.tmp-` and random hex; another name is tried when one exists.
    private static func createExclusively(
        besides path: String, permissions: FilePermissions
    ) throws(FileError) -> (descriptor: FileDescriptor, path: String) {
        var generator = SystemRandomNumberGenerator()
        var attempts = 0
        while true {
            let suffix = HexBytes.encode((0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let temporary = "\(path).tmp-\(suffix)"
            do throws(FileError) {
                let descriptor = try attempt(.write, temporary) {
                    try FileDescriptor.open(
                        FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                        permissions: permissions)
                }
                return (descriptor, temporary)
            } catch where error.cause == .fileExists && attempts < 8 {
                attempts += 1
            }
        }
    }

    /// fsync(2) of the directory holding `path`, so a rename into it lasts a crash. A file system that cannot sync
    /// a directory (EINVAL) has nothing to sync.
    private static func syncDirectory(holding path: String) throws(FileError) {
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let descriptor = try attempt(.replace, directory) {
            try FileDescriptor.open(FilePath(directory), .readOnly, options: [.directory, .closeOnExec])
        }
        try closing(descriptor, .replace, directory) { () throws(FileError) in
            if case .failure(let cause) = Errno.checking({ fsync(descriptor.rawValue) }), cause != .invalidArgument {
                throw FileError(.replace, path: directory, cause: cause)
            }
        }
    }

    /// Runs `body`, then closes `descriptor` whatever happened; a failed close (which can report a failed write)
    /// is an error too, unless `body` failed first.
    private static func closing<Result>(
        _ descriptor: FileDescriptor, _ operation: FileError.Operation, _ path: String,
        _ body: () throws(FileError) -> Result
    ) throws(FileError) -> Result {
        do {
            return try descriptor.closeAfter { () throws -> Result in try body() }
        } catch let error as FileError {
            throw error
        } catch {
            throw FileError(operation, path: path, cause: error as? Errno ?? .ioError)
        }
    }

    /// One swift-system call, its untyped `Errno` made a `FileError` for `path`.
    private static func attempt<Result>(
        _ operation: FileError.Operation, _ path: String, _ call: () throws -> Result
    ) throws(FileError) -> Result {
        do {
            return try call()
        } catch {
            throw FileError(operation, path: path, cause: error as? Errno ?? .ioError)
        }
    }

    /// One C call that returns -1 and sets errno (EINTR retried).
    private static func check(_ operation: FileError.Operation, _ path: String, _ call: () -> Int32) throws(FileError) {
        if case .failure(let cause) = Errno.checking(call) { throw FileError(operation, path: path, cause: cause) }
    }
}
